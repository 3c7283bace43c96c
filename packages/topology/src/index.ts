export { delayTopicName, isWaitingTopic, parkedTopicName, waitingTopicName } from './topic-names.ts';
export { parkedTopicSpec, topicSpecs, waitingTopicSpec } from './topic-specs.ts';
