// mcp_client.mjs - an MCP client on the official TypeScript SDK (installed by
// the Makefile under build/node), for tests/t_mcp.sh: it spawns a server over
// stdio, initializes, runs the steps of a JSON file, and prints one JSON line
// per step on stdout (the server's stderr goes to this process's stderr).
//
// usage: node tests/mcp_client.mjs STEPS.json COMMAND [ARGS...]
// STEPS.json is an array of steps:
//   {"list": true}                  tools/list  -> {"tools": [...]}
//   {"call": NAME, "args": {...}}   tools/call  -> {"result": {...}} or
//                                                  {"error": {"code": N, "message": S}}
//   {"ping": true}                  ping        -> {"result": {}}
// The first line says whom it talked to: {"server": ..., "capabilities": ...,
// "instructions": ...}. Exit status 0 once every step got an answer, 1 when
// the connection failed.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

// The SDK lives in build/node/node_modules (make test installs it), not next to this file.
const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, '..', 'build', 'node', 'node_modules', '@modelcontextprotocol', 'sdk',
	'dist', 'esm');
const { Client } = await import(pathToFileURL(path.join(sdk, 'client', 'index.js')).href);
const { StdioClientTransport } = await import(
	pathToFileURL(path.join(sdk, 'client', 'stdio.js')).href);

const [stepsFile, command, ...args] = process.argv.slice(2);
if (!stepsFile || !command) {
	console.error('usage: node tests/mcp_client.mjs STEPS.json COMMAND [ARGS...]');
	process.exit(2);
}
const steps = JSON.parse(readFileSync(stepsFile, 'utf8'));
const transport = new StdioClientTransport({
	command, args, env: { ...process.env }, stderr: 'inherit',
});
const client = new Client({ name: 'heapsh-test', version: '1.0.0' });
try {
	await client.connect(transport);
} catch (e) {
	console.log(JSON.stringify({ connect_error: String(e && e.message || e) }));
	process.exit(1);
}
console.log(JSON.stringify({
	server: client.getServerVersion(),
	capabilities: client.getServerCapabilities(),
	instructions: client.getInstructions(),
}));
for (const step of steps) {
	try {
		if (step.list) {
			const r = await client.listTools();
			console.log(JSON.stringify({ tools: r.tools }));
		} else if (step.ping) {
			console.log(JSON.stringify({ result: await client.ping() }));
		} else {
			const r = await client.callTool({ name: step.call, arguments: step.args ?? {} },
				undefined, { timeout: 300000 });
			console.log(JSON.stringify({ result: r }));
		}
	} catch (e) {
		console.log(JSON.stringify({ error: { code: e.code ?? null, message: String(e.message) } }));
	}
}
await client.close();
