"""Runs /app/dedupe.py on the sample and on inputs drawn now, at verification time, from a fresh random seed,
and compares with a reference: output that only fits the visible sample scores 0."""
import csv
import os
import random
import subprocess
import sys


def reference(text):
    lines = text.splitlines(keepends=True)
    out, seen = lines[:1], set()
    for line in lines[1:]:
        email = next(csv.reader([line]))[1].strip().lower()
        if email and email in seen:
            continue
        seen.add(email)
        out.append(line)
    return "".join(out)


def draw(rng):
    people = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Ken", "Radia", "Frances"]
    emails = [f"{p.lower()}{rng.randint(1, 99)}@{rng.choice(['ex.com', 'mail.org'])}" for p in people]
    lines = ["name,email,phone\n"]
    for _ in range(rng.randint(1, 40)):
        email = rng.choice(emails + [""])
        email = rng.choice([email, email.upper(), f" {email}", f"{email.title()}  "])
        name = rng.choice(people)
        name = rng.choice([name, f'"{name}, {rng.choice(people)}"', f'"{name} ""Jr"""'])
        lines.append(f"{name},{email},555-{rng.randint(0, 9999):04d}\n")
    return "".join(lines)


def run(text):
    proc = subprocess.run(
        [sys.executable, "/app/dedupe.py"], input=text, capture_output=True, text=True, timeout=10, cwd="/tmp"
    )
    return proc.stdout


def main():
    inputs = [open("/tests/sample-in.csv").read()]
    rng = random.Random(int.from_bytes(os.urandom(8), "big"))
    inputs += [draw(rng) for _ in range(25)]
    for i, text in enumerate(inputs):
        got, want = run(text), reference(text)
        if got != want:
            print(f"input {i} differs\n--- input\n{text}--- got\n{got}--- want\n{want}")
            return 1
    print(f"{len(inputs)} inputs match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
