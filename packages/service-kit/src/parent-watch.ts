// Preloaded (`--import <PARENT_WATCH_PRELOAD>`) into every service process that `npm start` or a
// test spawns: the runner's services run in their own process group (so Ctrl-C reaches only the
// runner, which stops them in order), and this makes a service stop when the runner itself
// disappears (SIGKILL, crash), so no service is ever left behind; a killed test run leaves none
// either. The service first gets SIGTERM (its graceful shutdown commits what it finished); if that
// has not ended the process within PARENT_GONE_EXIT_MS (e.g. Kafka is gone too and a final flush
// waits for it), the process exits anyway. Nothing is lost by that: uncommitted records are read
// again by the next consumer (at-least-once).
const PARENT_GONE_EXIT_MS = 5_000;
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  setTimeout(() => process.exit(1), PARENT_GONE_EXIT_MS).unref();
  process.kill(process.pid, 'SIGTERM');
}, 500);
timer.unref();
