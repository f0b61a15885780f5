"""schemathesis hooks for run.sh: what the OpenAPI document cannot say in JSON Schema.

The document carries every rule of the contract's buf.validate annotations (lengths, base58 pattern,
ranges, counts). A few checks need more than JSON Schema can say, and stay in the server after the
annotation pass: that base58 decodes to exactly 32 bytes (an address) or 64 bytes (a signature), a match
filter's offset bound and decoded size, an opaque cursor's contents, and a transaction's wire format and
signatures, a tip over the server's configured ceiling, a webhook URL the SSRF guard refuses, and an odds
horizon past the server's fee window; and one rule across two query parameters (at most 4 filters, `size` and `match` together),
which OpenAPI parameters cannot state. A schema-valid request refused for one of those reasons, with its documented 400 reason and
field, is not a looseness of the document; only that "schema-valid request rejected" failure is dropped
here, each case named. Every other check (5xx, response shapes, negative data accepted, ...) stands.
"""

import json

import schemathesis

ADDRESS_FIELDS = {"address", "mint", "owner", "programId", "program_id", "nonceAccount", "collections"}


def _beyond_schema(body):
    code = body.get("code")
    field = (body.get("details") or {}).get("field")
    message = body.get("message", "")
    if code == "invalid_transaction":
        return True  # random base64 is not a Solana transaction: refused cleanly, as it must be
    if code == "invalid_address" and field in ADDRESS_FIELDS and "base58 address of 32 bytes" in message:
        return True  # base58 of 32-44 characters that does not decode to 32 bytes
    if code == "invalid_parameter" and field == "signature" and "must be 64 bytes" in message:
        return True  # base58 of 64-88 characters that does not decode to 64 bytes
    if code == "tip_over_ceiling":
        return True  # the ceiling is the server's setting (SOLGATE_TIP_MAX_LAMPORTS), not the contract's
    if code == "webhook_url_refused" and field == "url":
        return True  # the SSRF guard (https, a public host, no credentials) is the server's policy, not a schema
    if code == "invalid_parameter" and field == "withinSlots" and "must be a whole number from 1 to" in message:
        return True  # k below the fee window's length (SOLGATE_FEES_WINDOW_SLOTS), a server setting
    if code in ("invalid_parameter", "collection_cursor_invalid") and field == "cursor":
        return True  # cursors are opaque and signed by the server
    if code == "invalid_parameter" and field == "match" and ("offset must be" in message or "decode to at most" in message):
        return True  # offset above 10 MiB, or more than 128 bytes
    if code == "invalid_parameter" and field == "match" and message.startswith("at most 4 filters are allowed"):
        return True  # size and match together: a rule across two query parameters, said in prose only
    return False


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if getattr(failure, "code", None) != "ST202" or response.status_code != 400:
        return True
    try:
        body = json.loads(response.content)
    except ValueError:
        return True
    return not _beyond_schema(body)
