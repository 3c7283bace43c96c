export { delayTopicName, parkedTopicName, waitingTopicName } from './topic-names.ts';
export { parkedTopicSpec, topicSpecs } from './topic-specs.ts';
