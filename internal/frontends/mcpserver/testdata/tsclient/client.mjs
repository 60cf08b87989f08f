// Drives `agentx mcp` with the official MCP TypeScript SDK's client, as an
// MCP client (the Inspector, an IDE) does, and prints what it saw as one
// JSON object for the Go test (TestTypeScriptClient) to check.
//
// usage: node client.mjs AGENTX_BINARY WORKSPACE
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, root] = process.argv.slice(2);
const out = { errors: [] };

const env = { ...process.env, AGENTX_ROOT: root, AGENTX_AGENT: "engineer" };
const transport = new StdioClientTransport({ command: bin, args: ["mcp"], env, cwd: root, stderr: "inherit" });
const client = new Client({ name: "agentx-ts-test", version: "1.0.0" });
client.onerror = (err) => out.errors.push(String(err && err.message ? err.message : err));

await client.connect(transport);
out.capabilities = client.getServerCapabilities();
out.server = client.getServerVersion();

// Every input property has one plain type: a union such as ["null",
// "integer"] is what made the Inspector send a number as a string.
const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name).sort();
out.unions = [];
out.enums = {};
for (const t of tools.tools) {
  for (const [name, p] of Object.entries(t.inputSchema.properties ?? {})) {
    if (Array.isArray(p.type)) out.unions.push(`${t.name}.${name}: ${JSON.stringify(p.type)}`);
    if (p.enum) out.enums[`${t.name}.${name}`] = p.enum;
  }
}

// Calls whose structured results the SDK checks against each tool's output
// schema (a mismatch throws).
const text = (r) => r.content.map((c) => c.text ?? "").join("");
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${text(r)}`);
  return r.structuredContent;
};
out.ask = await call("clarify_ask", { issue: 1, to: "architect", topic: "Cache", question: "TTL per key or global?", wait_seconds: 0 });
out.wait = await call("clarify_wait", { id: out.ask.id, wait_seconds: 0 });
out.human = await call("ask_human", { question: "Ship on Friday?", options: ["yes", "no"], issue: 1 });
out.proposal = await call("proposal_create", { type: "tool_fix", title: "t", rationale: "r", action: "a", impact: "high" });
out.list = await call("proposal_list", { status: "pending" });

// A call the client gives up on: the SDK sends notifications/cancelled,
// and a response the server sent anyway would be reported to onerror as
// one for an unknown message ID.
const abort = new AbortController();
const cancelled = client.callTool({ name: "clarify_wait", arguments: { id: out.ask.id, wait_seconds: 20 } }, undefined, { signal: abort.signal });
setTimeout(() => abort.abort("the person pressed Esc"), 300);
try {
  await cancelled;
  out.cancelled = "completed";
} catch (err) {
  out.cancelled = String(err);
}
await new Promise((r) => setTimeout(r, 700));
await client.ping();
out.pingAfter = true;

await client.close();
console.log(JSON.stringify(out));
