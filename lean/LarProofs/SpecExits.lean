import Lar.Spec.Trajectory
import LarProofs.Checks

/-!
An exit condition over a visit's steps, as the checker reads it (`ExitMet` over the facts
`stepFact` keeps of each call, with the `Bool` procedures it records), is the condition the
stage-visit table states over the calls themselves (`Spec.ExitHolds`): `Spec.exitMet_calls`, and
`Spec.exitMet_visit` for the visit's steps as the specification lists them (newest first).
-/

namespace Lar
open Lean Spec

/-- A `run_command` counts for a command exit exactly as the document says: the fact the checker
keeps is good exactly when the call is (`Spec.CommandGood`). -/
theorem Spec.cmdGood_iff (wf : Workflow) (useRan : Bool) (p : String) (c : ToolCall) :
    cmdGood useRan p (stepFact wf c) = true ↔ CommandGood useRan p c := by
  unfold CommandGood
  by_cases ht : c.tool = "run_command"
  · have hb : (c.tool == "run_command") = true := beq_iff_eq.mpr ht
    cases hs : strArg? c.args "command" with
    | none => cases useRan <;> simp [cmdGood, stepFact, hb, hs]
    | some cmd =>
      cases useRan <;> simp [cmdGood, stepFact, hb, hs, ht, succeeded_iff, ranToEnd_iff, globMatchL_iff]
  · have hb : (c.tool == "run_command") = false := by
      cases hx : (c.tool == "run_command") with
      | false => rfl
      | true => exact absurd (beq_iff_eq.mp hx) ht
    cases useRan <;> simp [cmdGood, stepFact, hb, ht]

/-- The checker's count of a tool's successful calls over the facts is the document's count over
the calls. -/
theorem Spec.countSucceeded_calls (wf : Workflow) (tool : String) : ∀ calls : List ToolCall,
    countSucceeded tool (calls.map (stepFact wf)) = succeededCalls tool calls
  | [] => rfl
  | c :: rest => by
    have ih := Spec.countSucceeded_calls wf tool rest
    have hp : ((stepFact wf c).ok && decide ((stepFact wf c).tool = tool)) = true ↔ (c.tool = tool ∧ Succeeded c) := by
      show (succeededB c && decide (c.tool = tool)) = true ↔ _
      rw [Bool.and_eq_true, decide_eq_true_iff, succeeded_iff]
      exact ⟨fun h => ⟨h.2, h.1⟩, fun h => ⟨h.2, h.1⟩⟩
    unfold countSucceeded at ih ⊢
    rw [List.map_cons, List.filter_cons]
    simp only [succeededCalls]
    by_cases hc : c.tool = tool ∧ Succeeded c
    · rw [if_pos (hp.mpr hc), if_pos hc, List.length_cons, ih]
    · rw [if_neg (fun h => hc (hp.mp h)), if_neg hc, ih, Nat.add_zero]

/-- No fact of the later steps records a changed file exactly when no later call changed one. -/
theorem Spec.changed_map (wf : Workflow) : ∀ rest : List ToolCall,
    (∀ g ∈ rest.map (stepFact wf), g.changed = []) ↔ ∀ d ∈ rest, changedFiles d = []
  | [] => ⟨fun _ d hd => (by cases hd), fun _ g hg => (by rw [List.map_nil] at hg; cases hg)⟩
  | d :: ds => by
    have ih := Spec.changed_map wf ds
    constructor
    · intro h x hx
      rcases List.mem_cons.mp hx with e | hx'
      · rw [e]
        exact h (stepFact wf d) (List.mem_cons.mpr (Or.inl rfl))
      · exact ih.mp (fun g hg => h g (List.mem_cons.mpr (Or.inr hg))) x hx'
    · intro h g hg
      rcases List.mem_cons.mp hg with e | hg'
      · rw [e]
        exact h d (List.mem_cons.mpr (Or.inl rfl))
      · exact ih.mpr (fun x hx => h x (List.mem_cons.mpr (Or.inr hx))) g hg'

/-- A command exit over the facts is the document's over the calls, for any test of a fact that
decides the document's test of its call. -/
theorem Spec.cmdMet_calls (wf : Workflow) (good : StepFact → Bool) (P : ToolCall → Prop)
    (hg : ∀ c, good (stepFact wf c) = true ↔ P c) (alc : Bool) :
    ∀ calls : List ToolCall, CmdMet good alc (calls.map (stepFact wf)) ↔ GoodSinceChange P alc calls
  | [] => Iff.rfl
  | c :: rest => by
    have ih := Spec.cmdMet_calls wf good P hg alc rest
    show ((good (stepFact wf c) = true ∧ (alc = true → ∀ g ∈ rest.map (stepFact wf), g.changed = [])) ∨
        CmdMet good alc (rest.map (stepFact wf))) ↔
      ((P c ∧ (alc = true → ∀ d ∈ rest, changedFiles d = [])) ∨ GoodSinceChange P alc rest)
    rw [hg c, Spec.changed_map wf rest, ih]

/-- `file_changed` over the facts is the document's over the calls. -/
theorem Spec.fileChanged_calls (wf : Workflow) (p : Option String) (calls : List ToolCall) :
    FileChangedMet p (calls.map (stepFact wf)) ↔ ∃ c ∈ calls, ∃ x ∈ changedFiles c, FileMatches p x := by
  constructor
  · intro hx
    obtain ⟨f, hf, x, hxm, hm⟩ := hx
    obtain ⟨c, hc, rfl⟩ := List.mem_map.mp hf
    exact ⟨c, hc, x, hxm, hm⟩
  · intro hx
    obtain ⟨c, hc, x, hxm, hm⟩ := hx
    exact ⟨stepFact wf c, List.mem_map.mpr ⟨c, hc, rfl⟩, x, hxm, hm⟩

/-- Every exit condition, over calls oldest first: the checker's reading of the facts it keeps is
the stage-visit table's condition over the calls. -/
theorem Spec.exitMet_calls (wf : Workflow) (cond : ExitCondition) (calls : List ToolCall) :
    ExitMet cond (calls.map (stepFact wf)) ↔ ExitHolds wf cond calls := by
  cases cond with
  | toolSucceeded tool n =>
    show n ≤ countSucceeded tool (calls.map (stepFact wf)) ↔ n ≤ succeededCalls tool calls
    rw [Spec.countSucceeded_calls]
  | commandSucceeded p alc =>
    exact Spec.cmdMet_calls wf (cmdGood false p) (CommandGood false p) (Spec.cmdGood_iff wf false p) alc calls
  | commandRan p alc =>
    exact Spec.cmdMet_calls wf (cmdGood true p) (CommandGood true p) (Spec.cmdGood_iff wf true p) alc calls
  | fileChanged p => exact Spec.fileChanged_calls wf p calls
  | outcomeRan alc =>
    exact Spec.cmdMet_calls wf (fun f => f.checked) (fun c => ∃ k, wf.outcome = .command k ∧ RanCheck k c)
      (fun c => ranCheckOf_iff wf.outcome c) alc calls

/-- The facts of a visit's steps, newest first, reversed, are those of the steps oldest first. -/
theorem Spec.map_stepFact_reverse (wf : Workflow) : ∀ l : List ToolCall,
    (l.map (stepFact wf)).reverse = l.reverse.map (stepFact wf)
  | [] => rfl
  | c :: l => by
    have ih := Spec.map_stepFact_reverse wf l
    rw [List.map_cons, List.reverse_cons, List.reverse_cons, List.map_append, ih] <;> rfl

/-- A visit's exit condition as the checker reads it over the facts of the visit's steps (newest
first, reversed) is `ExitHolds` over its calls oldest first. -/
theorem Spec.exitMet_visit (wf : Workflow) (cond : ExitCondition) (calls : List ToolCall) :
    ExitMet cond (calls.map (stepFact wf)).reverse ↔ ExitHolds wf cond calls.reverse := by
  rw [Spec.map_stepFact_reverse]
  exact Spec.exitMet_calls wf cond calls.reverse

end Lar
