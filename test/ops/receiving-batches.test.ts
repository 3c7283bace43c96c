// docs/receiving-webhooks.md, "Receiving a batch": the Node.js, Python and Go examples run as written, on
// batches from Sluice's batch writer signed with Standard Webhooks; their answers are read with the
// deliverer's own parser. Python and Go are skipped, with the reason, where the machine has neither.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { parseBatchResult, renderBatchBody } from '@sluice/webhook';
import { ROOT } from './code-facts.ts';

const doc = readFileSync(join(ROOT, 'docs/receiving-webhooks.md'), 'utf8');
const batchSection = doc.slice(doc.indexOf('## Receiving a batch'));

/** The first fenced block of `lang` in `text` that holds `marker`. */
function block(text: string, lang: string, marker: string): string {
  for (const m of text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g')))
    if (m[1]!.includes(marker)) return m[1]!;
  throw new Error(`docs/receiving-webhooks.md has no ${lang} block with ${marker}`);
}

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const event = (messageId: string, name: string) => ({
  messageId,
  body: Buffer.from(JSON.stringify({ type: 'track', event: name, messageId })),
});

interface Request {
  body: string;
  headers: Record<string, string>;
}

/**
 * A batch request as the deliverer sends it: body from `renderBatchBody`, signed over the whole body
 * with the batch id as `webhook-id`. `bodyBatchId` writes another id into the body (still signed);
 * `tampered` changes one byte after signing.
 */
function batchRequest(
  batchId: string,
  items: ReturnType<typeof event>[],
  over: { bodyBatchId?: string; tampered?: boolean } = {},
): Request {
  const body = renderBatchBody(over.bodyBatchId ?? batchId, items);
  const at = new Date();
  const sent = over.tampered ? Buffer.from(body.toString('utf8').replace('"ok"', '"OK"')) : body;
  assert.equal(sent.equals(body), !over.tampered);
  return {
    body: sent.toString('base64'),
    headers: {
      'content-type': 'application/json',
      'x-batch-id': batchId,
      'x-batch-size': String(items.length),
      'webhook-id': batchId,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1_000)),
      'webhook-signature': new Webhook(SECRET).sign(batchId, at, body.toString('utf8')),
    },
  };
}

const first = [event('m-1', 'ok'), event('m-2', 'fail-retry'), event('m-3', 'fail-permanent')];
const REQUESTS: Request[] = [
  batchRequest('b-1', first),
  // m-1 again, in another batch: taken once only.
  batchRequest('b-2', [event('m-1', 'ok'), event('m-4', 'ok')]),
  batchRequest('b-3', [event('m-5', 'ok')], { tampered: true }),
  batchRequest('b-4', [event('m-6', 'ok')], { bodyBatchId: 'b-other' }),
];

interface Outcome {
  results: { status: number; answer: unknown }[];
  calls: string[];
}

/** What every example must do with `REQUESTS`. */
function check(outcome: Outcome): void {
  assert.deepEqual(
    outcome.results.map((r) => r.status),
    [200, 200, 401, 400],
  );
  assert.deepEqual(outcome.results[1]!.answer, { failed: [] }, 'a duplicate is taken, not handled again');
  assert.deepEqual(outcome.calls, ['m-1', 'm-2', 'm-3', 'm-4'], 'each event handled once, in order');
  const answer = Buffer.from(JSON.stringify(outcome.results[0]!.answer));
  const read = parseBatchResult('application/json', answer, new Set(first.map((e) => e.messageId)));
  assert.equal(read.kind, 'partial', JSON.stringify(outcome.results[0]!.answer));
  if (read.kind !== 'partial') return;
  assert.deepEqual(Object.fromEntries(read.failed), {
    'm-2': { status: 503, error: 'busy' },
    'm-3': { status: 422, error: 'never' },
  });
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-receiving-batches-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const has = (command: string, args: string[]) => spawnSync(command, args, { stdio: 'ignore' }).status === 0;

function run(command: string, args: string[], cwd: string): Outcome {
  const input = JSON.stringify({ secrets: [SECRET], requests: REQUESTS });
  const r = spawnSync(command, args, { cwd, input, encoding: 'utf8', timeout: 180_000, env: { ...process.env } });
  assert.equal(r.status, 0, `${command} ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Outcome;
}

describe('docs/receiving-webhooks.md: the batch receivers run as written', () => {
  it('Node.js: over real HTTP', async () => {
    const file = join(dir, 'receiver.mjs');
    const node = doc.slice(doc.indexOf('## Node.js'));
    writeFileSync(
      file,
      `${block(node, 'js', 'export function validStandardWebhook(')}\n${block(batchSection, 'js', 'receiveBatch')}`,
    );
    const { batchServer, PermanentError } = await import(pathToFileURL(file).href);
    const calls: string[] = [];
    const server = batchServer([SECRET], async (e: { event: string }, messageId: string) => {
      calls.push(messageId);
      if (e.event === 'fail-permanent') throw new PermanentError('never');
      if (e.event === 'fail-retry') throw new Error('busy');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const results = [];
      for (const r of REQUESTS) {
        const res = await fetch(`http://127.0.0.1:${server.address().port}/`, {
          method: 'POST',
          headers: r.headers,
          body: Buffer.from(r.body, 'base64'),
        });
        const text = await res.text();
        results.push({ status: res.status, answer: text === '' ? null : JSON.parse(text) });
      }
      check({ results, calls });
    } finally {
      server.close();
    }
  });

  it('Python', { skip: has('python3', ['--version']) ? false : 'no python3 on PATH' }, () => {
    const harness = `
import base64, sys
calls = []
def handle(event, message_id):
    calls.append(message_id)
    if event.get("event") == "fail-permanent":
        raise PermanentError("never")
    if event.get("event") == "fail-retry":
        raise RuntimeError("busy")
spec = json.load(sys.stdin)
results = []
for r in spec["requests"]:
    status, answer = receive_batch(spec["secrets"], base64.b64decode(r["body"]), r["headers"], handle)
    results.append({"status": status, "answer": answer})
print(json.dumps({"results": results, "calls": calls}))
`;
    const python = doc.slice(doc.indexOf('## Python'));
    writeFileSync(
      join(dir, 'receiver.py'),
      [
        block(python, 'python', 'def valid_standard_webhook('),
        block(batchSection, 'python', 'receive_batch'),
        harness,
      ].join('\n'),
    );
    check(run('python3', ['receiver.py'], dir));
  });

  it('Go: through net/http', { skip: has('go', ['version']) ? false : 'no go on PATH', timeout: 240_000 }, () => {
    const go = join(dir, 'go');
    const goDoc = doc.slice(doc.indexOf('## Go'));
    const asMain = (code: string) => code.replace(/^package receiver$/m, 'package main');
    mkdirSync(go);
    writeFileSync(join(go, 'go.mod'), 'module receiverdoc\n\ngo 1.22\n');
    writeFileSync(join(go, 'signature.go'), asMain(block(goDoc, 'go', 'func ValidStandardWebhook(')));
    writeFileSync(join(go, 'batch.go'), asMain(block(batchSection, 'go', 'type Batches struct')));
    writeFileSync(join(go, 'main.go'), GO_HARNESS);
    check(run('go', ['run', '.'], go));
  });
});

const GO_HARNESS = `package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
)

func main() {
	var spec struct {
		Secrets  []string
		Requests []struct {
			Body    string
			Headers map[string]string
		}
	}
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		panic(err)
	}
	calls := []string{}
	srv := httptest.NewServer(&Batches{Secrets: spec.Secrets, Handle: func(event json.RawMessage, id string) error {
		calls = append(calls, id)
		var e struct{ Event string }
		json.Unmarshal(event, &e)
		switch e.Event {
		case "fail-permanent":
			return PermanentError{errors.New("never")}
		case "fail-retry":
			return errors.New("busy")
		}
		return nil
	}})
	defer srv.Close()
	results := []map[string]any{}
	for _, r := range spec.Requests {
		body, _ := base64.StdEncoding.DecodeString(r.Body)
		req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader(body))
		for k, v := range r.Headers {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		text, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var answer any
		if len(text) > 0 {
			json.Unmarshal(text, &answer)
		}
		results = append(results, map[string]any{"status": res.StatusCode, "answer": answer})
	}
	out, _ := json.Marshal(map[string]any{"results": results, "calls": calls})
	fmt.Println(string(out))
}
`;
