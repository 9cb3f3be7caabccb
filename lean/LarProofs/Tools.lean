import Lar.Spec.Checks

/-!
The eight tools: `Tool.ofName?` finds exactly the tools of `Tool.all`, and `ArgsValid` (`Lar.Spec.Checks`),
the strict argument schema as a proposition, is what `argsValidB` decides.
-/

namespace Lar
open Lean

/-- Every tool is in `Tool.all`. -/
theorem Tool.mem_all (t : Tool) : t ∈ Tool.all := by
  cases t <;> simp [Tool.all]

/-- `findTool` on a cons, unfolded. -/
theorem findTool_cons (name : String) (t : Tool) (ts : List Tool) :
    findTool name (t :: ts) = if t.name = name then some t else findTool name ts := rfl

/-- `findTool` finds a tool exactly when some tool of the list has the name. -/
theorem findTool_isSome (name : String) :
    ∀ l : List Tool, (findTool name l).isSome = true ↔ ∃ t ∈ l, t.name = name
  | [] => by simp [findTool]
  | t :: ts => by
    have ih := findTool_isSome name ts
    by_cases h : t.name = name
    · rw [findTool_cons, if_pos h]
      exact ⟨fun _ => ⟨t, List.mem_cons.mpr (Or.inl rfl), h⟩, fun _ => rfl⟩
    · rw [findTool_cons, if_neg h, ih]
      constructor
      · rintro ⟨x, hx, hn⟩
        exact ⟨x, List.mem_cons.mpr (Or.inr hx), hn⟩
      · rintro ⟨x, hx, hn⟩
        rcases List.mem_cons.mp hx with rfl | hx
        · exact absurd hn h
        · exact ⟨x, hx, hn⟩

/-- The tool `findTool` finds has the name it was asked for. -/
theorem findTool_name (name : String) :
    ∀ (l : List Tool) (t : Tool), findTool name l = some t → t.name = name
  | [], _, h => by simp [findTool] at h
  | u :: us, t, h => by
    rw [findTool_cons] at h
    by_cases hu : u.name = name
    · rw [if_pos hu] at h
      cases h
      exact hu
    · rw [if_neg hu] at h
      exact findTool_name name us t h

/-- The tool `Tool.ofName?` finds has the name it was asked for. -/
theorem Tool.ofName?_name {name : String} {t : Tool} (h : Tool.ofName? name = some t) : t.name = name :=
  findTool_name name Tool.all t h

/-- `argsValidB` decides `ArgsValid` (an object, every declared key fine, no other key). -/
theorem argsValid_iff (t : Tool) (args : Json) : argsValidB t args = true ↔ ArgsValid t args := by
  simp [argsValidB, ArgsValid, List.all_eq_true, List.any_eq_true]

end Lar
