import assert from 'node:assert/strict';
import { execFile, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, sep } from 'node:path';

/** The environment a user's shell would have: this Node first on the PATH, nothing of the repository. */
export function plainEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`, HOME: process.env.HOME, ...extra };
}

/**
 * This environment without the `npm_*` variables a parent `npm test` sets, so a child npm takes its
 * folder and settings from where it runs, as a user's npm does.
 */
export function npmEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
}

/** Runs a command, failing the test with its output unless it exits 0. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; input?: Buffer },
): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    input: options.input,
    encoding: 'utf8',
  });
  assert.equal(
    result.status,
    0,
    `${command} ${args.join(' ')} (in ${options.cwd}):\n${result.stdout}\n${result.stderr}`,
  );
  return result;
}

/**
 * `npm pack` of a workspace package, as a user runs it (its `prepack` builds, `postpack` restores
 * the manifest): the tarball's path and the files in it. Asserts the manifest comes back. The pack
 * runs on a copy at the same depth of the repository (`.pack/<name>-*`, so the package's relative
 * paths and the root's node_modules still resolve): `prepack` rewrites the manifest while it runs,
 * and a test running beside this one that imports the package would meet the publish manifest.
 */
export function packWorkspace(packageDir: string): {
  tarball: string;
  files: string[];
  manifest: Record<string, unknown>;
} {
  const root = dirname(dirname(packageDir));
  mkdirSync(join(root, '.pack'), { recursive: true });
  const stage = mkdtempSync(join(root, '.pack', `${basename(packageDir)}-`));
  try {
    cpSync(packageDir, stage, {
      recursive: true,
      filter: (src) => !`${src}${sep}`.includes(`${sep}node_modules${sep}`) && !src.endsWith(`${sep}dist`),
    });
    const manifestPath = join(stage, 'package.json');
    const before = readFileSync(manifestPath, 'utf8');
    const dest = mkdtempSync(join(tmpdir(), 'sluice-pack-'));
    run('npm', ['pack', '--pack-destination', dest], { cwd: stage, env: npmEnv() });
    assert.equal(readFileSync(manifestPath, 'utf8'), before, 'postpack restores the in-repo package.json');
    assert.ok(!existsSync(join(stage, 'package.json.in-repo')), 'no manifest backup is left behind');
    const [name] = readdirSync(dest).filter((f) => f.endsWith('.tgz'));
    assert.ok(name, `a tarball in ${dest}`);
    const tarball = join(dest, name);
    const files = run('tar', ['-tzf', tarball], { cwd: dest })
      .stdout.split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''));
    const manifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json'], { cwd: dest }).stdout) as Record<
      string,
      unknown
    >;
    return { tarball, files, manifest };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * Runs a command without blocking this process (a server in the test must answer it), failing
 * the test with its output unless it exits 0 within `timeoutMs`.
 */
export function runAsync(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: options.cwd, env: options.env, timeout: options.timeoutMs, encoding: 'utf8' },
      (err, stdout, stderr) => {
        if (err)
          reject(new Error(`${command} ${args.join(' ')} (in ${options.cwd}): ${err.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}
