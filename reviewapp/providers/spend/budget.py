"""Budget preflight: a request that COULD cross a limit is never sent.

Spend counts every attempted request, and for input tokens the reported figure
when a provider reported one, else the conservative estimate
(``utf8_bytes+256``: at least one byte per token for any byte-level tokenizer,
plus a fixed allowance for chat-template tokens). Requests in flight count with
their estimate until their answer reports the real figure.
"""

from __future__ import annotations

from dataclasses import dataclass

ESTIMATE_RULE = "utf8_bytes+256"
TEMPLATE_ALLOWANCE = 256


def estimate_input_tokens(request_bytes: int) -> int:
    return int(request_bytes) + TEMPLATE_ALLOWANCE


@dataclass
class Spend:
    requests: int = 0
    input_tokens: int = 0

    def refusal(self, *, max_requests: int, max_input_tokens: int, estimate: int) -> str:
        """'' when the next request fits, else the reason it may not be sent."""
        if self.requests + 1 > max_requests:
            return f"budget reached: {self.requests} of {max_requests} attempted requests used"
        if self.input_tokens + estimate > max_input_tokens:
            return (
                f"budget reached: next request is estimated at {estimate} input tokens ({ESTIMATE_RULE}); "
                f"{self.input_tokens} spent + {estimate} would exceed {max_input_tokens}"
            )
        return ""
