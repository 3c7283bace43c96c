// `sluice …` / `npm run sluice -- …`: parse, run, exit with the command's code.
import { processIo } from './io.ts';
import { runCli } from './program.ts';

process.exitCode = await runCli(process.argv.slice(2), processIo());
