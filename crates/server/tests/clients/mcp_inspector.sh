#!/usr/bin/env bash
# Checks the MCP server of skillrag with the MCP Inspector's CLI (`@modelcontextprotocol/inspector-cli`,
# what `npx @modelcontextprotocol/inspector --cli` runs): each check is one or more Inspector runs,
# and jq checks the JSON it prints. The Inspector's TypeScript SDK also checks a tool's
# structuredContent against the tool's outputSchema on every tools/call.
#
#   eval "$(scripts/setup-test-clients)"     # sets SKILLRAG_TEST_MCP_INSPECTOR
#   crates/server/tests/clients/mcp_inspector.sh stdio target/release/skillrag /tmp/demo
#   crates/server/tests/clients/mcp_inspector.sh http http://127.0.0.1:18080/mcp
#
# stdio has the Inspector start `SKILLRAG_BIN -C PROJECT_DIR mcp` (with this environment, so
# SKILLRAG_EMBED_MODEL and the other settings reach it); http talks MCP streamable HTTP to
# `skillrag serve` (SKILLRAG_API_TOKEN, when set, is sent as the bearer token). The project must be
# the example of `skillrag init` (labor-law, router-faq, tea-brewing), indexed. Prints one line per
# check passed; stops at the first failure with a FAIL line (on stderr) and exit status 1.
set -euo pipefail
shopt -s inherit_errexit # a failed check inside $(...) stops the script too

usage() {
  echo "usage: mcp_inspector.sh stdio SKILLRAG_BIN PROJECT_DIR | mcp_inspector.sh http URL" >&2
  echo "       (SKILLRAG_TEST_MCP_INSPECTOR: the Inspector CLI's entry point; scripts/setup-test-clients)" >&2
  exit 2
}

TOOLS='["ask","compile_context","get_skill","list_skills","list_sources","search_knowledge_base"]'
# Routed to labor-law; its evidence is 《劳动合同法》第十九条, and the skill's standing rule
# (knowledge/rules/citation.md: cite the article) comes first although the task does not mention it.
LAW_TASK="试用期最长可以约定多久？"

inspector="${SKILLRAG_TEST_MCP_INSPECTOR:-}"
if [ -z "$inspector" ] || [ ! -f "$inspector" ]; then
  echo "mcp_inspector.sh: SKILLRAG_TEST_MCP_INSPECTOR is '${inspector}', not the Inspector CLI's entry point:" \
    'run `eval "$(scripts/setup-test-clients)"` first' >&2
  exit 2
fi
inspector="$(cd "$(dirname "$inspector")" && pwd)/$(basename "$inspector")"
command -v jq >/dev/null || { echo "mcp_inspector.sh: jq is required" >&2; exit 2; }

headers=()
case "${1:-}" in
  stdio)
    [ $# -eq 3 ] || usage
    [ -x "$2" ] || { echo "mcp_inspector.sh: $2 is not an executable" >&2; exit 2; }
    [ -d "$3" ] || { echo "mcp_inspector.sh: $3 is not a folder" >&2; exit 2; }
    # Absolute, as the Inspector runs from its own folder (below).
    bin="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
    project="$(cd "$3" && pwd)"
    target=("$bin" -C "$project" mcp)
    where="stdio: $bin -C $project mcp"
    hint=" (the server's own messages: run \`$bin -C $project mcp </dev/null\`)"
    ;;
  http)
    [ $# -eq 2 ] || usage
    target=("$2")
    where="streamable HTTP: $2"
    hint=""
    if [ -n "${SKILLRAG_API_TOKEN:-}" ]; then
      headers=(--header "Authorization: Bearer $SKILLRAG_API_TOKEN")
    fi
    ;;
  *) usage ;;
esac
# The stdio server gets this environment: not this harness's own variables, which skillrag would
# warn about as unknown settings.
for v in "${!SKILLRAG_TEST_@}"; do unset "$v"; done

version="$(node -p "require('$(dirname "$inspector")/../package.json').version" 2>/dev/null || echo '?')"
echo "MCP Inspector CLI $version (node $(node --version)) over $where"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
checks=0

# On stderr: most checks run inside $(...).
fail() {
  echo "FAIL $*" >&2
  exit 1
}

ok() {
  checks=$((checks + 1))
  echo "ok   $*"
}

# inspect ARGS...: one Inspector run (`--cli TARGET ARGS...`); its JSON goes to stdout, its stderr
# to $scratch/stderr. Returns the Inspector's exit status.
# It runs from the CLI's own build folder: the CLI picks its package.json by a path relative to the
# working directory (modelcontextprotocol/inspector#1503), which fails from most other folders.
inspect() {
  (cd "$(dirname "$inspector")" && node "$inspector" --cli "${target[@]}" "${headers[@]}" "$@") 2>"$scratch/stderr"
}

# The Inspector's stderr without its v1 deprecation banner.
inspector_stderr() {
  grep -v -e '^$' -e 'is deprecated' -e 'Upgrade:' -e 'security fixes only' "$scratch/stderr" || true
}

# run WHAT ARGS...: an Inspector run that must succeed; prints its JSON.
run() {
  local what="$1"
  shift
  local out
  if ! out="$(inspect "$@")"; then
    fail "$what: the Inspector failed: $(inspector_stderr | head -c 600)$hint"
  fi
  printf '%s\n' "$out"
}

# expect JSON FILTER MESSAGE [jq options...]: jq -e FILTER must hold on JSON.
expect() {
  local json="$1" filter="$2" message="$3"
  shift 3
  if ! jq -e "$@" "$filter" >/dev/null 2>"$scratch/jq" <<<"$json"; then
    fail "$message: $(cat "$scratch/jq")$( (jq -c . <<<"$json" 2>/dev/null || printf '%s' "$json") | head -c 600)"
  fi
}

# tool_result WHAT TOOL ARGS...: a tools/call that must not be an error; prints the result.
tool_result() {
  local what="$1" tool="$2"
  shift 2
  local r
  if [ $# -gt 0 ]; then
    r="$(run "$what" --method tools/call --tool-name "$tool" --tool-arg "$@")"
  else
    r="$(run "$what" --method tools/call --tool-name "$tool")"
  fi
  expect "$r" '.isError != true and (.structuredContent | type) == "object"' "$what: an error, or no structuredContent"
  printf '%s\n' "$r"
}

# refused WHAT NEEDLE INSPECTOR-ARGS...: the call must fail, as a tool result with isError or as an
# MCP error, with a message that contains NEEDLE.
refused() {
  local what="$1" needle="$2"
  shift 2
  local out message
  if out="$(inspect "$@")"; then
    expect "$out" '.isError == true' "$what was accepted"
    message="$(jq -r '[.content[]? | select(.type == "text") | .text] | join("\n")' <<<"$out")"
  else
    message="$(inspector_stderr)"
  fi
  case "$message" in
    *"$needle"*) ;;
    *) fail "$what: the error does not name $needle: $(head -c 300 <<<"$message")" ;;
  esac
  printf '%s\n' "$message" | head -n 1
}

# --- tools/list -------------------------------------------------------------------------------
tools="$(run "tools/list" --method tools/list)"
expect "$tools" '[.tools[].name] | sort == $want' \
  "tools/list names $(jq -c '[.tools[].name] | sort' <<<"$tools"), not the six tools $TOOLS" --argjson want "$TOOLS"
for t in $(jq -r '.tools[].name' <<<"$tools"); do
  expect "$tools" '.tools[] | select(.name == $t) | (.description | type == "string" and length > 0)' \
    "tool $t has no description" --arg t "$t"
  expect "$tools" '.tools[] | select(.name == $t) | .annotations.readOnlyHint == true' \
    "tool $t is not marked readOnlyHint" --arg t "$t"
  expect "$tools" '.tools[] | select(.name == $t) | .inputSchema.type == "object" and .inputSchema.additionalProperties == false' \
    "tool $t: its input schema is not a closed object" --arg t "$t"
  expect "$tools" '.tools[] | select(.name == $t) | .outputSchema.type == "object"' \
    "tool $t has no outputSchema" --arg t "$t"
done
ok "tools/list: $(jq -r '[.tools[].name] | join(", ")' <<<"$tools"); all readOnlyHint, with input and output schemas"

# --- tools/call -------------------------------------------------------------------------------
skills="$(tool_result "list_skills" list_skills)"
expect "$skills" '[.structuredContent.skills[].skill] | sort == ["labor-law", "router-faq", "tea-brewing"]' \
  "list_skills does not list the three example skills"
ok "tools/call list_skills: $(jq -r '[.structuredContent.skills[].skill] | join(", ")' <<<"$skills")"

context="$(tool_result "compile_context" compile_context "task=$LAW_TASK")"
expect "$context" '.structuredContent.refusal == null and .structuredContent.route.skills == ["labor-law"]' \
  "compile_context $LAW_TASK is not routed to labor-law"
expect "$context" '.structuredContent.skills | length == 1 and .[0].skill == "labor-law" and (.[0].instructions | length > 0)' \
  "compile_context: labor-law's instructions are missing"
expect "$context" '.structuredContent.context.pieces | length > 0 and all(.[]; .skill == "labor-law")' \
  "compile_context: no pieces, or pieces from another skill"
expect "$context" '.structuredContent.context.pieces[0] | .tier == "rules" and .source == "knowledge/rules/citation.md"' \
  "compile_context: the first piece is not labor-law's standing rule"
expect "$context" '[.structuredContent.context.pieces[].tier | {"rules": 0, "examples": 1, "references": 2}[.]]
    | . as $r | all(range(1; length); $r[. - 1] <= $r[.])' "compile_context: pieces not in tier order (rules, examples, references)"
expect "$context" 'any(.structuredContent.context.pieces[]; .text | contains("第十九条"))' \
  "compile_context: no piece carries 第十九条"
expect "$context" '[.content[] | select(.type == "text") | .text] | join("\n") | contains("## Instructions") and contains("[1] ")' \
  "compile_context: the text content lacks the instructions or the [1] piece"
ok "tools/call compile_context $LAW_TASK: labor-law, $(jq -r '.structuredContent.context.pieces | "\(length) pieces, first \(.[0].tier) \(.[0].source)"' <<<"$context"), 第十九条 among them"

search="$(tool_result "search_knowledge_base" search_knowledge_base "query=$LAW_TASK" skill=labor-law k=2)"
expect "$search" '.structuredContent.hits | length > 0 and length <= 2 and all(.[]; .skill == "labor-law" and (.source | length > 0))' \
  "search_knowledge_base skill=labor-law k=2: hits"
ok "tools/call search_knowledge_base skill=labor-law k=2: $(jq -r '.structuredContent.hits | "\(length) hits, first \(.[0].source)"' <<<"$search")"

answer="$(tool_result "ask" ask "query=$LAW_TASK")"
expect "$answer" '.structuredContent.refusal == null and .structuredContent.route.skills == ["labor-law"] and (.structuredContent.citations | length > 0)' \
  "ask $LAW_TASK: not answered from labor-law with citations"
expect "$answer" '[.content[] | select(.type == "text") | .text] | join("\n") | test("\\[[0-9]+\\]")' \
  "ask: no [n] citation marker in the text"
ok "tools/call ask $LAW_TASK: $(jq -r '.structuredContent.citations | length' <<<"$answer") citations, routed to labor-law"

# The Inspector CLI 0.15 sends every --tool-arg value as a string (`"k": "2"`); 1.0 parses JSON
# first, so `k='"2"'` sends the same string. A string that reads as the declared number is taken.
search="$(tool_result "search_knowledge_base k as the string \"2\"" search_knowledge_base "query=$LAW_TASK" skill=labor-law 'k="2"')"
expect "$search" '.structuredContent.hits | length > 0 and length <= 2' "search_knowledge_base k=\"2\": hits"
ok "tools/call search_knowledge_base k=\"2\" (a number sent as a string): $(jq -r '.structuredContent.hits | length' <<<"$search") hits"

first="$(refused "search_knowledge_base k=0" '`k`' --method tools/call --tool-name search_knowledge_base --tool-arg query=reset k=0)"
refused "search_knowledge_base colour=red" 'colour' \
  --method tools/call --tool-name search_knowledge_base --tool-arg query=reset colour=red >/dev/null
refused "compile_context budget=0" '`budget`' \
  --method tools/call --tool-name compile_context --tool-arg task=reset budget=0 >/dev/null
ok "tools/call with bad arguments (k=0, an unknown colour, budget=0) refused, naming the argument: $first"

# --- resources --------------------------------------------------------------------------------
resources="$(run "resources/list" --method resources/list)"
for s in labor-law router-faq tea-brewing; do
  expect "$resources" 'any(.resources[]; .uri == $u)' "resources/list lacks $s's SKILL.md" --arg u "skill://$s/SKILL.md"
done
expect "$resources" 'any(.resources[]; .uri == "skill://labor-law/knowledge/rules/citation.md")' \
  "resources/list lacks labor-law's knowledge files"
ok "resources/list: $(jq -r '.resources | length' <<<"$resources") resources, each skill's SKILL.md among them"

skill_md="$(run "resources/read" --method resources/read --uri skill://labor-law/SKILL.md)"
expect "$skill_md" '.contents[0].uri == "skill://labor-law/SKILL.md" and (.contents[0].text | contains("name: labor-law"))' \
  "resources/read skill://labor-law/SKILL.md: no text"
refused "resources/read skill://labor-law/../../skillrag.toml" 'skillrag.toml' \
  --method resources/read --uri 'skill://labor-law/../../skillrag.toml' >/dev/null
ok "resources/read skill://labor-law/SKILL.md: $(jq -r '.contents[0] | "\(.text | length) chars of \(.mimeType)"' <<<"$skill_md"); a path out of the skill refused"

# --- prompts ----------------------------------------------------------------------------------
prompts="$(run "prompts/list" --method prompts/list)"
expect "$prompts" '[.prompts[].name] | sort == ([$skills.structuredContent.skills[].skill] | sort)' \
  "prompts/list is not one prompt per skill" --argjson skills "$skills"
expect "$prompts" 'all(.prompts[]; any(.arguments[]; .name == "task" and .required == true))' \
  "a prompt lacks its required task argument"
prompt="$(run "prompts/get" --method prompts/get --prompt-name labor-law --prompt-args "task=$LAW_TASK")"
expect "$prompt" '.messages[0].content.text | contains("## Instructions") and (rtrimstr("\n") | endswith($task))' \
  "prompts/get labor-law: not the skill's instructions ending with the task" --arg task "$LAW_TASK"
refused "prompts/get labor-law without its task" 'task' --method prompts/get --prompt-name labor-law >/dev/null
ok "prompts/list: $(jq -r '[.prompts[].name] | join(", ")' <<<"$prompts"), one per skill; prompts/get labor-law ends with the task, and needs it"

echo "PASS MCP Inspector CLI ($where): $checks checks"
