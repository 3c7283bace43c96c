export { delayTopicName, parkedTopicName, waitingTopicName } from './topic-names.ts';
export { topicSpecs } from './topic-specs.ts';
