// Preloaded (`node --import <PARENT_WATCH_PRELOAD>`) into every service process that
// `npm start` or a test spawns: the runner's services run in their own process group (so Ctrl-C reaches only the runner, which stops them
// in order), and this makes a service shut down gracefully if the runner itself disappears
// (SIGKILL, crash), so no service is ever left behind; a killed test run leaves none either.
const parent = process.ppid;
const timer = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(timer);
  process.kill(process.pid, 'SIGTERM');
}, 500);
timer.unref();
