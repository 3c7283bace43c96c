export { CodedError } from './coded-error.ts';
