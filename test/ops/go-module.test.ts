// The Go client's module path is one a user can `go get`: the path go.mod declares is the one the
// docs and the `npm start` banner give, and a program outside the repository builds against it.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { GO_MODULE } from '@sluice/runner';
import { ROOT } from './code-facts.ts';
import { run } from './npm-pack.ts';

const modulePath = /^module (\S+)$/m.exec(readFileSync(join(ROOT, 'clients/go/go.mod'), 'utf8'))?.[1];

test('go.mod, docs/clients.md, the README and the banner name one module path, under the repository', () => {
  assert.equal(modulePath, 'github.com/sluice-oss/sluice/clients/go');
  assert.equal(GO_MODULE, modulePath);
  for (const doc of ['docs/clients.md', 'README.md', 'clients/go/README.md']) {
    assert.ok(readFileSync(join(ROOT, doc), 'utf8').includes(modulePath), `${doc} names ${modulePath}`);
  }
  assert.ok(readFileSync(join(ROOT, 'docs/clients.md'), 'utf8').includes(`go get ${modulePath}@latest`));
});

test('a Go program outside the repository imports the client by its module path (offline, local replace)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-go-user-'));
  try {
    const env = { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', GOWORK: 'off' };
    run('go', ['mod', 'init', 'example.com/user'], { cwd: dir, env });
    run('go', ['mod', 'edit', `-replace=${modulePath}=${join(ROOT, 'clients/go')}`], { cwd: dir, env });
    writeFileSync(
      join(dir, 'main.go'),
      `package main

import (
\t"fmt"

\tanalytics "${modulePath}"
)

func main() {
\tclient := analytics.New("WRITE_KEY")
\tclient.Endpoint = "http://127.0.0.1:1"
\tfmt.Println(client.Close() == nil)
}
`,
    );
    run('go', ['get', modulePath!], { cwd: dir, env });
    assert.equal(run('go', ['run', '.'], { cwd: dir, env }).stdout, 'true\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
