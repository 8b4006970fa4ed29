/**
 * A marketplace repository laid out as anthropics/claude-code lays out its two Python hook plugins, `hookify` and
 * `security-guidance`: the same paths, the same `hooks.json` commands and the same import graph between the files
 * (a hook script imports modules beside it, or its plugin's folder as a package). The Python is written here, small:
 * each hook reads its event from stdin and answers as the real one does when nothing is wrong, and fails as the real
 * one does when a module it imports is missing (`ModuleNotFoundError`, or hookify's "Hookify import error" message).
 * A client that installs only the files a hooks file names gets a hook that dies or enforces nothing.
 */

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

const hookifyHook = (event: string) => `#!/usr/bin/env python3
"""${event} hook of hookify: evaluates the project's rules."""
import json
import os
import sys

PLUGIN_ROOT = os.environ.get("CLAUDE_PLUGIN_ROOT")
if PLUGIN_ROOT:
    # The plugin's folder is the package \`hookify\`: its parent goes on the path.
    sys.path.insert(0, os.path.dirname(PLUGIN_ROOT))
    sys.path.insert(0, PLUGIN_ROOT)

try:
    from hookify.core.config_loader import load_rules
    from hookify.core.rule_engine import RuleEngine
except ImportError as error:
    print(json.dumps({"systemMessage": f"Hookify import error: {error}"}))
    sys.exit(0)


def main():
    event = json.load(sys.stdin)
    rules = load_rules(event="${event}")
    print(json.dumps(RuleEngine().evaluate_rules(rules, event)))


if __name__ == "__main__":
    main()
`

const hookify: Record<string, string> = {
  ".claude-plugin/plugin.json": json({ name: "hookify", version: "0.1.0", description: "Hooks written as rules in .local.md files" }),
  ".gitignore": "__pycache__/\n",
  "README.md": "# hookify\n\nRules in `.claude/hookify.*.local.md` files, enforced by hooks.\n",
  "agents/conversation-analyzer.md": "---\nname: conversation-analyzer\ndescription: Finds behaviours worth a rule.\n---\nRead the conversation and propose rules.\n",
  "commands/configure.md": "---\ndescription: Turn rules on and off\n---\nList the rules and ask which to change.\n",
  "commands/help.md": "---\ndescription: How hookify works\n---\nExplain rules and events.\n",
  "commands/hookify.md": "---\ndescription: Make a rule from a sentence\n---\nWrite a rule file for: $ARGUMENTS\n",
  "commands/list.md": "---\ndescription: List the rules\n---\nList `.claude/hookify.*.local.md`.\n",
  "core/__init__.py": "",
  "core/config_loader.py": `"""Reads the rules of the project's .claude/hookify.*.local.md files."""
import glob
import os
from dataclasses import dataclass, field
from typing import List


@dataclass
class Condition:
    field: str
    pattern: str


@dataclass
class Rule:
    name: str
    event: str
    conditions: List[Condition] = field(default_factory=list)


def load_rules(event=None):
    found = sorted(glob.glob(os.path.join(".claude", "hookify.*.local.md")))
    return [Rule(name=os.path.basename(path), event=event or "all") for path in found]
`,
  "core/rule_engine.py": `"""Matches an event against the rules."""
from hookify.core.config_loader import Condition, Rule


class RuleEngine:
    def evaluate_rules(self, rules, event):
        blocked = [rule.name for rule in rules if isinstance(rule, Rule) and any(isinstance(c, Condition) for c in rule.conditions)]
        return {"systemMessage": "blocked by " + ", ".join(blocked)} if blocked else {}
`,
  "examples/dangerous-rm.local.md": "---\nname: dangerous-rm\nevent: bash\npattern: rm -rf\n---\nThink twice.\n",
  "hooks/__init__.py": "",
  "hooks/hooks.json": json({
    description: "hookify: rules from .local.md files",
    hooks: Object.fromEntries(
      [["PreToolUse", "pretooluse"], ["PostToolUse", "posttooluse"], ["Stop", "stop"], ["UserPromptSubmit", "userpromptsubmit"]].map((
        [event, script]
      ) => [event, [{ hooks: [{ type: "command", command: `python3 \${CLAUDE_PLUGIN_ROOT}/hooks/${script}.py`, timeout: 10 }] }]])
    )
  }),
  "hooks/posttooluse.py": hookifyHook("PostToolUse"),
  "hooks/pretooluse.py": hookifyHook("PreToolUse"),
  "hooks/stop.py": hookifyHook("Stop"),
  "hooks/userpromptsubmit.py": hookifyHook("UserPromptSubmit"),
  "matchers/__init__.py": "",
  "skills/writing-rules/SKILL.md": "---\nname: writing-rules\ndescription: Writes hookify rules.\n---\nA rule is a .local.md file with a pattern.\n",
  "utils/__init__.py": ""
}

/** The modules security-guidance's hook imports, each importing what its real namesake does. */
const securityModules: Record<string, string> = {
  "_base.py": "\"\"\"Logging and shared constants.\"\"\"\nPROVENANCE_TAG = \"security-guidance\"\n\n\ndef debug_log(message):\n    return None\n",
  "extensibility.py": "\"\"\"Where a project adds its own patterns.\"\"\"\nEXTRA_PATTERNS = []\n",
  "review_api.py": "\"\"\"Asks for a review of a diff.\"\"\"\nimport extensibility\n\n\ndef reviewer():\n    return extensibility.EXTRA_PATTERNS\n",
  "session_state.py": "\"\"\"What was already said this session.\"\"\"\nimport contextlib\n\n\n@contextlib.contextmanager\ndef with_locked_state():\n    yield {}\n",
  "gitutil.py": "\"\"\"Reads the repository's diff.\"\"\"\n\n\ndef staged_diff():\n    return \"\"\n",
  "diffstate.py": "\"\"\"Which diffs were reviewed.\"\"\"\nfrom gitutil import staged_diff\n\n\ndef unreviewed():\n    return staged_diff()\n",
  "llm.py": "\"\"\"The model that reviews.\"\"\"\nimport extensibility\nimport review_api\nfrom _base import debug_log, PROVENANCE_TAG\nfrom session_state import with_locked_state\n",
  "patterns.py": "\"\"\"Patterns that deserve a warning.\"\"\"\nPATTERNS = [(\"eval(\", \"eval runs arbitrary code\")]\n\n\ndef warnings_for(text):\n    return [message for pattern, message in PATTERNS if pattern in text]\n"
}

const securityCommand = (script: string) => `bash "\${CLAUDE_PLUGIN_ROOT}/hooks/sg-python.sh" "\${CLAUDE_PLUGIN_ROOT}/hooks/${script}"`

const securityGuidance: Record<string, string> = {
  ".claude-plugin/plugin.json": json({ name: "security-guidance", version: "1.0.0", description: "Security warnings on edits" }),
  "README.md": "# security-guidance\n\nWarns about risky patterns in edits.\n",
  "hooks/hooks.json": json({
    description: "security-guidance: pattern warnings on edits",
    hooks: {
      SessionStart: [{ hooks: [{ type: "command", command: securityCommand("ensure_agent_sdk.py"), timeout: 180 }] }],
      UserPromptSubmit: [{ hooks: [{ type: "command", command: securityCommand("security_reminder_hook.py") }] }],
      PostToolUse: [{ matcher: "Edit|Write|MultiEdit", hooks: [{ type: "command", command: securityCommand("security_reminder_hook.py") }] }]
    }
  }),
  "hooks/sg-python.sh": `#!/usr/bin/env bash
# Runs the hook with the first Python 3 found.
set -e
for candidate in python3 python; do
  if command -v "$candidate" >/dev/null 2>&1; then exec "$candidate" "$@"; fi
done
echo "security-guidance: no Python 3 found" >&2
exit 1
`,
  "hooks/ensure_agent_sdk.py": "\"\"\"Checks the review's dependencies at session start.\"\"\"\nimport sys\n\nfrom _base import debug_log\n\ndebug_log(\"ready\")\nsys.exit(0)\n",
  "hooks/security_reminder_hook.py": `"""Warns about risky patterns in an edit."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import review_api  # noqa: E402
from _base import debug_log  # noqa: E402
import extensibility  # noqa: E402
from patterns import warnings_for  # noqa: E402
from session_state import with_locked_state  # noqa: E402
from gitutil import staged_diff  # noqa: E402
import diffstate  # noqa: E402
import llm  # noqa: E402


def main():
    event = json.load(sys.stdin)
    text = json.dumps(event.get("tool_input", {}))
    with with_locked_state():
        found = warnings_for(text)
    if found:
        print("\\n".join(found), file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
`,
  ...Object.fromEntries(Object.entries(securityModules).map(([name, text]) => [`hooks/${name}`, text]))
}

/** The marketplace repository: `.claude-plugin/marketplace.json` and the two plugins under `plugins/`. */
export const files: Readonly<Record<string, string>> = {
  ".claude-plugin/marketplace.json": json({
    name: "claude-code-plugins",
    owner: { name: "Anthropic" },
    plugins: [
      { name: "hookify", source: "./plugins/hookify", description: "Hooks from rules in .local.md files", category: "productivity" },
      { name: "security-guidance", source: "./plugins/security-guidance", description: "Security warnings on edits", category: "security" }
    ]
  }),
  ...Object.fromEntries(Object.entries(hookify).map(([path, text]) => [`plugins/hookify/${path}`, text])),
  ...Object.fromEntries(Object.entries(securityGuidance).map(([path, text]) => [`plugins/security-guidance/${path}`, text]))
}

/** An event of each kind the hooks answer, as Claude Code sends them on stdin. */
export const sampleEvents: Readonly<Record<string, unknown>> = {
  SessionStart: { hook_event_name: "SessionStart", session_id: "s-1", source: "startup" },
  UserPromptSubmit: { hook_event_name: "UserPromptSubmit", session_id: "s-1", prompt: "tidy the README" },
  PreToolUse: { hook_event_name: "PreToolUse", session_id: "s-1", tool_name: "Bash", tool_input: { command: "ls" } },
  PostToolUse: { hook_event_name: "PostToolUse", session_id: "s-1", tool_name: "Edit", tool_input: { file_path: "README.md", new_string: "Hello" } },
  Stop: { hook_event_name: "Stop", session_id: "s-1", stop_hook_active: false }
}
