// Runs the official conformance suite's server requirement sets (`conformance server
// --requirements <revision>`) against svc's /mcp and fails the run unless every scenario the
// revision requires that applies to svc passes, with no expected failures.
//
// A requirement set is written for an SDK's conformance test server: besides the protocol, many of
// its scenarios call fixtures only such a server has (tools named test_*, fixture prompts and
// resources, completions of fixture arguments). svc's tools are its API's routes, so those
// scenarios do not apply to it; they are listed below with the reason, still run (the suite's
// report shows them), and an entry that starts to pass fails the run until it is removed. Every
// other required scenario must pass. Inside those, the only failure taken is one the suite itself
// reports as not testable because the server lists none of its diagnostic tools (test_*): the
// suite can exercise the requirement only through a tool of its own test server that needs a
// client capability (sampling, elicitation) or sends log messages, which no tool of svc does. The
// suite's own applicability rules are kept as they are: scenarios it does not score at a revision
// (extensions such as tasks, pending ones) run and are reported but do not decide the exit code.
//
// Usage: node requirements.mjs <conformance package dir> <mcp url> <revision>...
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [pkg, url, ...revisions] = process.argv.slice(2);
if (!pkg || !url || revisions.length === 0) {
  throw new Error("usage: node requirements.mjs <conformance package dir> <mcp url> <revision>...");
}

// The required scenarios that call what only an SDK's conformance test server serves.
const notApplicable = {
  // completion/complete of a fixture prompt's argument: svc offers no prompts or resource
  // templates, so it declares no completions and has nothing to complete.
  "completion-complete": "fixture prompt test_prompt_with_arguments (completions are not declared)",
  // Fixture tools (test_simple_text, test_image_content, …): svc's tools are its API's routes,
  // and none returns images, audio or embedded resources, fails on purpose, reports progress,
  // logs, or asks the client for sampling or elicitation.
  "tools-call-simple-text": "fixture tool test_simple_text",
  "tools-call-image": "fixture tool test_image_content",
  "tools-call-audio": "fixture tool test_audio_content",
  "tools-call-embedded-resource": "fixture tool test_embedded_resource",
  "tools-call-mixed-content": "fixture tool test_multiple_content_types",
  "tools-call-error": "fixture tool test_error_handling",
  "tools-call-with-progress": "fixture tool test_tool_with_progress",
  "tools-call-with-logging": "fixture tool test_tool_with_logging",
  "tools-call-sampling": "fixture tool test_sampling",
  "tools-call-elicitation": "fixture tool test_elicitation",
  "elicitation-sep1034-defaults": "fixture tool test_elicitation_sep1034_defaults",
  "elicitation-sep1330-enums": "fixture tool test_elicitation_sep1330_enums",
  // Fixture resources (test://static-text, …) and subscriptions: svc serves no MCP resources, and
  // declares no subscribe.
  "resources-read-text": "fixture resource test://static-text",
  "resources-read-binary": "fixture resource test://static-binary",
  "resources-templates-read": "fixture resource template test://template/{id}/data",
  "resources-subscribe": "resource subscriptions (not declared: svc serves no resources)",
  "resources-unsubscribe": "resource subscriptions (not declared: svc serves no resources)",
  // Fixture prompts (test_simple_prompt, …): svc serves no MCP prompts.
  "prompts-get-simple": "fixture prompt test_simple_prompt",
  "prompts-get-with-args": "fixture prompt test_prompt_with_arguments",
  "prompts-get-embedded-resource": "fixture prompt test_prompt_with_embedded_resource",
  "prompts-get-with-image": "fixture prompt test_prompt_with_image",
  // Multi-round-trip requests (SEP-2322) through fixture tools and a fixture prompt
  // (test_input_required_result_*): no tool of svc asks the client for input mid-call.
  "input-required-result-basic-elicitation": "fixture tool test_input_required_result_elicitation",
  "input-required-result-basic-sampling": "fixture tool test_input_required_result_sampling",
  "input-required-result-basic-list-roots": "fixture tool test_input_required_result_list_roots",
  "input-required-result-request-state": "fixture tool test_input_required_result_request_state",
  "input-required-result-multiple-input-requests": "fixture tool test_input_required_result_multiple_inputs",
  "input-required-result-multi-round": "fixture tool test_input_required_result_multi_round",
  "input-required-result-non-tool-request": "fixture prompt test_input_required_result_prompt",
  "input-required-result-result-type": "fixture tool test_input_required_result_elicitation",
  "input-required-result-tampered-state": "fixture tool test_input_required_result_tampered_state",
  "input-required-result-capability-check": "fixture tool test_input_required_result_capabilities",
};

// required reads the server scenarios a revision requires from the suite's frozen requirement
// set (requirements/<revision>.yaml: a `server:` list of `  - <scenario>` lines).
function required(revision) {
  const lines = readFileSync(join(pkg, "requirements", revision + ".yaml"), "utf8").split("\n");
  const start = lines.indexOf("server:");
  if (start < 0) throw new Error(`requirements/${revision}.yaml has no server list`);
  const out = [];
  for (const line of lines.slice(start + 1)) {
    const m = line.match(/^  - ([a-z0-9-]+)\s*$/);
    if (!m) break;
    out.push(m[1]);
  }
  if (out.length === 0) throw new Error(`requirements/${revision}.yaml requires no server scenario`);
  return out;
}

// results reads the checks of every scenario the suite saved (server-<scenario>-<timestamp>/).
function results(dir) {
  const out = new Map();
  for (const name of readdirSync(dir)) {
    const m = name.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
    if (m) out.set(m[1], JSON.parse(readFileSync(join(dir, name, "checks.json"), "utf8")));
  }
  return out;
}

const failing = (c) => c.status === "FAILURE";
const problems = [];
const excluded = new Set();
for (const revision of revisions) {
  const dir = mkdtempSync(join(tmpdir(), `conformance-${revision}-`));
  console.log(`== conformance server --requirements ${revision}`);
  // The suite's own exit code counts the fixture scenarios as failures: the verdict is below.
  const run = spawnSync(process.execPath, [join(pkg, "dist/index.js"), "server", "--url", url, "--requirements", revision, "-o", dir],
    { stdio: ["ignore", "inherit", "inherit"] });
  if (run.error) throw run.error;
  const got = results(dir);
  rmSync(dir, { recursive: true, force: true });
  const listed = new Set(got.get("tools-list")?.find((c) => c.id === "tools-list")?.details?.tools ?? []);
  let passed = 0, checks = 0;
  const untestable = [];
  for (const scenario of required(revision)) {
    const cs = got.get(scenario);
    if (!cs) {
      problems.push(`${revision} ${scenario}: the suite saved no result (not measured)`);
      continue;
    }
    if (notApplicable[scenario]) {
      excluded.add(scenario);
      if (!cs.some(failing)) problems.push(`${revision} ${scenario} now passes: remove it from notApplicable in requirements.mjs`);
      continue;
    }
    let ok = true;
    for (const c of cs.filter(failing)) {
      const tool = c.details?.untestable ? c.errorMessage?.match(/does not list the diagnostic tool '(test_[a-z0-9_]+)'/)?.[1] : undefined;
      if (tool && !listed.has(tool)) {
        untestable.push(`${scenario}:${c.id} (needs ${tool})`);
        continue;
      }
      ok = false;
      problems.push(`${revision} ${scenario}: ${c.id}: ${c.errorMessage ?? c.description}`);
    }
    checks += cs.filter((c) => c.status === "SUCCESS").length;
    if (ok) passed++;
  }
  const applicable = required(revision).filter((s) => !notApplicable[s]).length;
  console.log(`\n== ${revision}: ${passed} of ${applicable} applicable required scenarios pass (${checks} checks); ` +
    `${required(revision).length - applicable} call fixtures of an SDK test server and do not apply`);
  for (const u of untestable) console.log(`   not testable without the suite's diagnostic tool: ${u}`);
}
for (const scenario of Object.keys(notApplicable)) {
  if (!excluded.has(scenario)) problems.push(`${scenario} is required by none of ${revisions.join(", ")}: remove it from notApplicable in requirements.mjs`);
}
if (problems.length > 0) {
  console.error("\nconformance requirements not met:\n  " + problems.join("\n  "));
  process.exit(1);
}
console.log(`\nconformance requirements ${revisions.join(", ")}: every applicable scenario passes`);
