import Lar

/-! Sanity checks of the checker, evaluated when this file is compiled. -/

/-! Glob.lean -/
namespace Lar
open Lean
#guard globMatch "*test*" "npm test"
#guard globMatch "npm test" "npm test"
#guard !globMatch "npm test" "npm  test"
#guard globMatch "a?c" "abc"
#guard !globMatch "a?c" "ac"
#guard globMatch "*" ""
#guard !globMatch "" "x"
#guard globMatch "*a*a*a*b" "aaaaaaaaaaaaaaaaaaaaaaaab"
#guard !globMatch "*a*a*a*b" "aaaaaaaaaaaaaaaaaaaaaaaaa"
#guard norm "  npm\t test \n" == "npm test"
#guard (partsL "true && rm -rf / ; echo `id`".toList).map String.ofList == ["true", "rm -rf /", "echo", "id"]
#guard commandMatchesB "rm -rf /".toList "true && rm  -rf /".toList
#guard (npath "./src//a/../b.ts").toOption == some "src/b.ts"
#guard (npath "a/..").toOption == some "."
#guard (npath "../x").toOption == none
#guard (npath "C:foo").toOption == none
#guard (npath "\\etc").toOption == none
end Lar

/-! Num.lean -/
namespace Lar.Num
open Lean
#guard floatToJson 0.5 == Json.num ⟨5, 1⟩
#guard floatToJson (1.0 / 3.0) == Json.num ⟨33333333333333331, 17⟩
#guard floatToJson (-0.25) == Json.num ⟨-25, 2⟩
#guard floatToJson 1.0 == Json.num ⟨1, 0⟩
#guard floatToJson 0.0 == Json.num ⟨0, 0⟩
#guard floatToJson (0.5 * (2.0 / 3.0) + 0.25 * (1.0 / 3.0)) == Json.num ⟨41666666666666663, 17⟩
#guard decimalToFloat 5 1 == 0.5
#guard decimalToFloat 1 1 == 0.1
#guard decimalToFloat (-25) 2 == -0.25
#guard safeIntOf? ⟨9007199254740991, 0⟩ == some 9007199254740991
#guard safeIntOf? ⟨9007199254740992, 0⟩ == none
#guard intOf? ⟨120, 1⟩ == some 12
#guard intOf? ⟨125, 1⟩ == none
#guard intOf? ⟨5, 1⟩ == none
#guard intOf? ⟨0, 1000000000⟩ == some 0
#guard intOf? ⟨1, 1000000000⟩ == none
#guard decimalToFloat 1 1000000000 == 0.0
end Lar.Num

/-! Mcp.lean -/
namespace Lar
open Lean
#guard parseMcpName "mcp__github__get_issue" == some ("github", "get_issue")
#guard parseMcpName "mcp__my_server__files_read" == some ("my_server", "files_read")
#guard parseMcpName "mcp__a___b" == some ("a", "_b")
#guard parseMcpName "mcp__a__b__c" == some ("a", "b__c")
#guard parseMcpName "mcp__git-hub__x-y" == some ("git-hub", "x-y")
#guard ["mcp____x", "mcp___a__x", "mcp__a_", "mcp__a__", "mcp__a", "mcp_a__b", "read_file", "",
  "mcp__a.b__c", "mcp__a__b.c", "mcp__é__x", "MCP__a__b"].all (fun n => !isMcpName n)
-- No built-in tool has an MCP name (LarProofs.Gate states it as a condition rather than evaluate it).
#guard Tool.all.all (fun t => !isMcpName t.name)
#guard isMcpName ("mcp__s__" ++ String.ofList (List.replicate 56 'x'))
#guard !isMcpName ("mcp__s__" ++ String.ofList (List.replicate 57 'x'))
#guard isServerPart "github_com" && isServerPart "a-b_c" && isServerPart "x"
#guard ["", "_a", "a_", "a__b", "a.b"].all (fun s => !isServerPart s)
#guard isMcpPattern "mcp__github__get_*" && isMcpPattern "mcp__*" && isMcpPattern "mcp__docs__search"
#guard ["mcp_*", "*", "read_file", "mcp__a b", "mcp__[ab]__x"].all (fun p => !isMcpPattern p)
#guard !isMcpPattern ("mcp__" ++ String.ofList (List.replicate 60 '*'))
end Lar

/-! Schema.lean -/
namespace Lar
namespace Read
open Lean
#guard (size "s" 0 "0" (.str "512M")).toOption == some "512M"
#guard (size "s" (64 * 1024 * 1024) "64M" (.str "67108864")).toOption == some "67108864"
#guard (size "s" (64 * 1024 * 1024) "64M" (.str "32M")).toOption == none
#guard ["08G", "8GB", "1.5G", "G", "", "8g"].all fun t => (size "s" 0 "0" (.str t)).toOption == none
end Read
end Lar

/-! Schema.lean -/
namespace Lar
open Lean
#guard (TurnUsage.check "m" (Json.mkObj [("usage", Json.mkObj
  [("prompt", toJson (10 : Nat)), ("completion", toJson (3 : Nat)), ("cached", toJson (10 : Nat))])])).toOption.isSome
#guard (TurnUsage.check "m" (Json.mkObj [("usage", Json.mkObj
  [("prompt", toJson (10 : Nat)), ("completion", toJson (3 : Nat)), ("cached", toJson (11 : Nat))])])).toOption.isNone
#guard (TurnUsage.check "m" (Json.mkObj [("usage", Json.mkObj [("prompt", toJson (10 : Nat))])])).toOption.isNone
#guard (TokensEvent.check (Json.mkObj [("turn", toJson (1 : Nat)), ("promptIds", toJson [1, 2]),
  ("completionIds", toJson [3]), ("logprobs", Json.arr #[Json.num (JsonNumber.fromNat 0)])])).toOption.isSome
#guard (TokensEvent.check (Json.mkObj [("turn", toJson (1 : Nat)), ("promptIds", toJson [1, 2]),
  ("completionIds", toJson [3]), ("logprobs", Json.arr #[])])).toOption.isNone
#guard (TokensEvent.check (Json.mkObj [("turn", toJson (2 : Nat)), ("missing", toJson "none")])).toOption.isSome
#guard (TokensEvent.check (Json.mkObj [("turn", toJson (2 : Nat)), ("missing", toJson "none"),
  ("promptIds", toJson [1])])).toOption.isNone
#guard (TokensEvent.check (Json.mkObj [("turn", toJson (1 : Nat)), ("promptIds", toJson [2147483648]),
  ("completionIds", toJson ([] : List Nat)), ("logprobs", Json.arr #[])])).toOption.isNone
private def digestA : String := String.ofList (List.replicate 64 'a')
#guard (McpToolsEvent.fromJson? (Json.mkObj [("server", toJson "github"), ("reason", toJson "start"),
  ("tools", Json.arr #[Json.mkObj [("name", toJson "mcp__github__get_issue"), ("tool", toJson "get_issue"),
    ("digest", toJson digestA), ("readOnly", toJson true)]])])).toOption ==
  some ("github", [("mcp__github__get_issue", digestA)])
-- A tool of another server, a name that is not an MCP name, a bad digest, an unknown reason: refused.
#guard (McpToolsEvent.fromJson? (Json.mkObj [("server", toJson "github"), ("reason", toJson "start"),
  ("tools", Json.arr #[Json.mkObj [("name", toJson "mcp__gitlab__get_issue"), ("tool", toJson "get_issue"),
    ("digest", toJson digestA)]])])).toOption.isNone
#guard (McpToolsEvent.fromJson? (Json.mkObj [("server", toJson "github"), ("reason", toJson "start"),
  ("tools", Json.arr #[Json.mkObj [("name", toJson "mcp__github__get.issue"), ("tool", toJson "get.issue"),
    ("digest", toJson digestA)]])])).toOption.isNone
#guard (McpToolsEvent.fromJson? (Json.mkObj [("server", toJson "github"), ("reason", toJson "start"),
  ("tools", Json.arr #[Json.mkObj [("name", toJson "mcp__github__get_issue"), ("tool", toJson "get_issue"),
    ("digest", toJson "ABC")]])])).toOption.isNone
#guard (McpToolsEvent.fromJson? (Json.mkObj [("server", toJson "github"), ("reason", toJson "gone"),
  ("tools", Json.arr #[])])).toOption.isNone
#guard (McpToolsEvent.fromJson? (Json.mkObj [("server", toJson "github"), ("reason", toJson "stopped"),
  ("tools", Json.arr #[]), ("error", toJson "exited with code 1")])).toOption == some ("github", [])
end Lar

/-! Schema.lean: the restore event (core/schema/trajectory.ts `RestoreEvent`) -/
namespace Lar
open Lean
#guard ["run-1.lar.jsonl", "a.lar.jsonl", "0.lar.jsonl", "A_b.c-d.lar.jsonl", "a..lar.jsonl",
  String.ofList (List.replicate 201 'a') ++ ".lar.jsonl"].all isRunFileName
#guard ["", ".lar.jsonl", "a.lar.json", "-a.lar.jsonl", "_a.lar.jsonl", ".a.lar.jsonl", "a/b.lar.jsonl",
  "a b.lar.jsonl", "a.lar.jsonl\n", "é.lar.jsonl", "aé.lar.jsonl", "a.LAR.jsonl",
  String.ofList (List.replicate 202 'a') ++ ".lar.jsonl"].all (fun s => !isRunFileName s)
private def checkpointA : String := String.ofList (List.replicate 40 'a')
private def restoreWith (extra : List (String × Json)) : Json :=
  Json.mkObj ([("type", toJson "restore"), ("checkpoint", toJson checkpointA), ("before", toJson checkpointA),
    ("reverted", toJson ([] : List String)), ("deleted", toJson ([] : List String)),
    ("restored", toJson ([] : List String))] ++ extra)
#guard (RestoreEvent.check (restoreWith [])).toOption.isSome
#guard (RestoreEvent.check (restoreWith [("run", toJson "run-1.lar.jsonl"), ("undo", toJson true),
  ("step", toJson (3 : Nat)), ("at", toJson "2026-01-01T00:00:00Z")])).toOption.isSome
-- `undo` is `z.literal(true)`, `at` a non-empty string, `run` a run's file name: refused otherwise.
#guard (RestoreEvent.check (restoreWith [("undo", toJson false)])).toOption.isNone
#guard (RestoreEvent.check (restoreWith [("at", toJson "")])).toOption.isNone
#guard (RestoreEvent.check (restoreWith [("at", Json.null)])).toOption.isNone
#guard (RestoreEvent.check (restoreWith [("run", toJson "../x.lar.jsonl")])).toOption.isNone
#guard (RestoreEvent.check (restoreWith [("run", toJson "run-1.jsonl")])).toOption.isNone
#guard (Event.fromJson? (restoreWith [("undo", toJson false)])).toOption.isNone
end Lar

/-! Schema.lean: the workflow's ids, patterns and paths (core/schema/workflow.ts) -/
namespace Lar
open Lean
#guard ["a", "work", "fix-2_b", "Z9", "A-"].all isStageId
#guard ["", "1st", "_a", "-a", "a b", "a.b", "é", "aé", "a/b"].all (fun s => !isStageId s)
private def stageNamed (id : String) : Json :=
  Json.mkObj [("id", toJson id), ("tools", toJson ["submit"]), ("budget", toJson (5 : Nat))]
private def workflowWith (id : String) (extra : List (String × Json)) : Json :=
  Json.mkObj ([("lar", toJson (1 : Nat)), ("id", toJson "w"), ("stages", Json.arr #[stageNamed id]),
    ("transitions", Json.mkObj []), ("start", toJson id), ("terminal", toJson [id]),
    ("outcome", Json.mkObj [("command", toJson "npm test")])] ++ extra)
#guard (Workflow.fromJson? (workflowWith "work" [])).toOption.isSome
#guard (Workflow.fromJson? (workflowWith "fix-2_b" [])).toOption.isSome
-- A stage id is a letter followed by letters, digits, "_" or "-".
#guard (Workflow.fromJson? (workflowWith "1st" [])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "a b" [])).toOption.isNone
-- Patterns and workspace paths are not empty; readable and hidden paths are host paths.
#guard (Workflow.fromJson? (workflowWith "work" [("policy", Json.mkObj [("commands", Json.mkObj
  [("deny", toJson ["rm -rf /"]), ("ask", toJson ["sudo *"])]), ("paths", Json.mkObj [("deny", toJson ["secrets/*"])])])])).toOption.isSome
#guard (Workflow.fromJson? (workflowWith "work" [("policy", Json.mkObj [("commands", Json.mkObj
  [("deny", toJson ["rm -rf /", ""])])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("policy", Json.mkObj [("commands", Json.mkObj
  [("ask", toJson [""])])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("policy", Json.mkObj [("paths", Json.mkObj
  [("deny", toJson [""])])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("sandbox", Json.mkObj [("protected", toJson ["src/", "test"]),
  ("writable", toJson ["~/.cache", ".husky"]), ("readable", toJson ["~/.gitconfig", "/etc/hosts", "~"]),
  ("hidden", toJson ["~/.ssh"])])])).toOption.isSome
#guard (Workflow.fromJson? (workflowWith "work" [("sandbox", Json.mkObj [("protected", toJson [""])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("sandbox", Json.mkObj [("writable", toJson [""])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("sandbox", Json.mkObj [("readable", toJson [".gitconfig"])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("sandbox", Json.mkObj [("readable", toJson ["~user/x"])])])).toOption.isNone
#guard (Workflow.fromJson? (workflowWith "work" [("sandbox", Json.mkObj [("hidden", toJson [""])])])).toOption.isNone
end Lar

/-! Checks.lean -/
namespace Lar
open Lean
#guard permittedB { id := "s", tools := ["read_file", "mcp__github__get_*"], budget := 1 } "mcp__github__get_issue"
#guard permittedB { id := "s", tools := ["mcp__docs__search"], budget := 1 } "mcp__docs__search"
#guard !permittedB { id := "s", tools := ["read_file", "mcp__github__get_*"], budget := 1 } "mcp__github__create_issue"
#guard !permittedB { id := "s", tools := ["mcp__github__*"], budget := 1 } "mcp__gitlab__get_issue"
#guard permittedB { id := "s", tools := ["mcp__*"], budget := 1 } "mcp__gitlab__get_issue"
-- A pattern permits MCP tools only: not a built-in tool it happens to match, nor a name that is no MCP name.
#guard !permittedB { id := "s", tools := ["mcp__*"], budget := 1 } "read_file"
#guard !permittedB { id := "s", tools := ["mcp__*"], budget := 1 } "mcp__a.b__c"
#guard !permittedB { id := "s", tools := ["read_file"], budget := 1 } "write_file"
end Lar

/-! Checks.lean: read-only paths are compared without their trailing `/`s -/
namespace Lar
open Lean
#guard dropTrailingSlashes "src//".toList == "src".toList && dropTrailingSlashes "a/b/".toList == "a/b".toList
#guard dropTrailingSlashes "src".toList == "src".toList && dropTrailingSlashes "/".toList == []
#guard readOnlyPathText "src/" == "src" && readOnlyPathText ".vscode/" == ".vscode"
#guard underB "src/" "src/a.ts" && underB "src/" "src" && underB "src//" "src/a/b.ts" && underB "src" "src/a.ts"
#guard !underB "src/" "srcx/a.ts" && !underB "src" "srcx" && !underB "test" "tests/x"
#guard !pathOkB [] ["src/"] "./src/a.ts" && pathOkB [] ["src/"] "srcx/a.ts"
end Lar
