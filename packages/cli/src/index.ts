export { buildProgram, runCli } from './program.ts';
export { CliError } from './io.ts';
export type { CliIo } from './io.ts';
export { buildTestCall, CALL_TYPES } from './domain/test-call.ts';
export type { CallType, TestCallOptions } from './domain/test-call.ts';
