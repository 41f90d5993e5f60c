"""Measures agentproof-ai's generation and verification rates for the families that match ours.

    python3 -m venv /tmp/ap && /tmp/ap/bin/pip install agentproof-ai==0.3.0
    /tmp/ap/bin/python scripts/bench_agentproof.py

Prints one JSON object keyed by family, comparable with `hco bench families --json`.
Verification uses the correct answer (read from the challenge's private data), as ours does.
"""

import json
import time

from agentproof.api import generate_challenge, solve_challenge, verify_response
from agentproof.models import AgentResponse, ChallengeSpec

SECONDS = 1.0


def rate(fn, seconds=SECONDS):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - start)


def answer_of(challenge):
    if challenge.challenge_type == "proof_of_work":
        return solve_challenge(challenge)
    if challenge.challenge_type == "semantic_math_lock":
        return solve_challenge(challenge)
    return AgentResponse(
        challenge_id=challenge.challenge_id,
        challenge_type=challenge.challenge_type,
        payload={"answer": challenge.private_data["expected_answer"]},
    )


out = {}
for family in ["obfuscated_text_lock", "multi_pass_lock", "semantic_math_lock", "proof_of_work"]:
    spec = ChallengeSpec(challenge_type=family)
    challenge = generate_challenge(spec)
    response = answer_of(challenge)
    assert verify_response(challenge, response).ok if hasattr(verify_response(challenge, response), "ok") else True
    out[family] = {
        "generate_per_s": round(rate(lambda: generate_challenge(spec))),
        "verify_per_s": round(rate(lambda: verify_response(challenge, response))),
    }
print(json.dumps(out))
