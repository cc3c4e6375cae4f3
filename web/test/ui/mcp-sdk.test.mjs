// `termkeep mcp` driven by the official TypeScript MCP SDK's client, as
// most agents' MCP clients drive it, and by raw JSON-RPC for what an SDK
// never sends. The SDK checks every answer against the protocol's schema
// (Zod): a result it rejects fails here even when the Go SDK accepts it.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Server, BIN, testEnv, waitFor } from './harness.mjs';

let s;
before(async () => {
  s = await Server.start();
});
after(async () => {
  await s?.stop();
});

/**
 * connect starts `termkeep mcp` for s and connects the SDK's client to it;
 * client.stderr is what it has printed, for a failure's message.
 */
async function connect() {
  const client = new Client({ name: 'termkeep-ui-tests', version: '1' });
  const transport = new StdioClientTransport({
    command: join(BIN, 'termkeep'),
    args: ['--state-dir', s.dir, '--no-autostart', 'mcp'],
    env: { ...testEnv(), TERMKEEP_STATE_DIR: s.dir, SHELL: '/bin/bash' },
    stderr: 'pipe',
  });
  client.stderr = '';
  transport.stderr?.on('data', (b) => (client.stderr += b));
  await client.connect(transport);
  return client;
}

/** result is a tool call's structured result, failing on a tool error. */
function result(r) {
  assert.ok(!r.isError, `tool error: ${JSON.stringify(r.content)}`);
  return r.structuredContent ?? JSON.parse(r.content[0].text);
}

test('the TypeScript SDK client: tools, a command, and a blank screen as a resource', async () => {
  const c = await connect();
  let step = 'list tools';
  try {
    const tools = (await c.listTools()).tools.map((t) => t.name);
    for (const want of ['list_sessions', 'create_session', 'run_command', 'read_output', 'read_screen']) {
      assert.ok(tools.includes(want), `${want} in ${tools}`);
    }

    step = 'create a shell and run a command at its first prompt';
    const shell = result(await c.callTool({ name: 'create_session', arguments: { command: ['bash', '--noprofile'], name: 'sdk-shell' } }));
    const ran = result(await c.callTool({ name: 'run_command', arguments: { session: shell.id, command: "echo sdk-ran; (exit 3)" } }));
    assert.equal(ran.exit_code, 3, JSON.stringify(ran));
    assert.match(ran.output, /^sdk-ran$/m, JSON.stringify(ran));

    // A program that never draws: its screen's resource is blank, and
    // still has text (the SDK refuses contents with neither text nor blob).
    step = 'a blank screen as a resource';
    const blank = result(await c.callTool({ name: 'create_session', arguments: { command: ['sleep', '60'], name: 'sdk-blank' } }));
    const list = await c.listResources();
    assert.ok(list.resources.some((r) => r.uri.includes(blank.id)), JSON.stringify(list.resources));
    const read = await c.readResource({ uri: `termkeep://sessions/${blank.id}/screen` });
    assert.equal(read.contents.length, 1);
    assert.equal(typeof read.contents[0].text, 'string');

    // An unknown resource is a JSON-RPC error with a real code: invalid
    // params, as the current specification has it.
    step = 'an unknown resource';
    const err = await c.readResource({ uri: 'termkeep://sessions/no-such-session/screen' }).then(
      () => null,
      (e) => e,
    );
    assert.ok(err instanceof McpError, `want an McpError, got ${err}`);
    assert.notEqual(err.code, 0);
    assert.equal(err.code, -32602, err.message);

    // A tool's failure is a result with isError, never a protocol error.
    step = 'a failing tool';
    const bad = await c.callTool({ name: 'read_output', arguments: { session: 'no-such-session' } });
    assert.equal(bad.isError, true);
    result(await c.callTool({ name: 'kill_session', arguments: { session: blank.id } }));
  } catch (e) {
    // Say where, and what the MCP server and the server printed.
    e.message = `at "${step}": ${e.message}\n-- termkeep mcp printed:\n${c.stderr}\n-- the server printed:\n${s.log.slice(-4000)}`;
    throw e;
  } finally {
    await c.close();
  }
});

/**
 * rawMCP is `termkeep mcp` spoken to line by line: send writes one
 * message, next waits for the next answer.
 */
function rawMCP() {
  const p = spawn(join(BIN, 'termkeep'), ['--state-dir', s.dir, '--no-autostart', 'mcp'], {
    env: { ...testEnv(), TERMKEEP_STATE_DIR: s.dir },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let buf = '';
  const answers = [];
  p.stdout.on('data', (b) => {
    buf += b;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
      if (buf.slice(0, i).trim()) answers.push(JSON.parse(buf.slice(0, i)));
    }
  });
  return {
    send: (m) => p.stdin.write(typeof m === 'string' ? m + '\n' : JSON.stringify(m) + '\n'),
    next: () => waitFor(() => answers.shift(), { timeout: 10000, what: 'an answer from termkeep mcp' }),
    close: () => {
      p.stdin.end();
      p.kill();
    },
  };
}

test('raw JSON-RPC: null and fractional ids, and a request before initialize, get real error codes', async () => {
  const m = rawMCP();
  try {
    m.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const early = await m.next();
    assert.equal(early.id, 1);
    assert.ok(early.error && early.error.code !== 0, JSON.stringify(early));

    m.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    assert.ok((await m.next()).result, 'initialize');
    m.send({ jsonrpc: '2.0', method: 'notifications/initialized' });

    // MCP forbids null ids, and 1.5 is no integer: neither is answered as
    // another request's id.
    m.send('{"jsonrpc":"2.0","id":null,"method":"tools/list"}');
    const nul = await m.next();
    assert.equal(nul.error?.code, -32600, JSON.stringify(nul));
    assert.equal(nul.id, null);
    m.send('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}');
    const frac = await m.next();
    assert.equal(frac.error?.code, -32600, JSON.stringify(frac));
    assert.notEqual(frac.id, 1);

    // And the server goes on.
    m.send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
    const ok = await m.next();
    assert.equal(ok.id, 3);
    assert.ok(ok.result.tools.length > 0);
  } finally {
    m.close();
  }
});
