"""Verifies an amil direct callback (spec 5.3). Usage: python3 verify.py <api-key> < callback-body"""
import hashlib
import hmac
import sys
from urllib.parse import unquote_plus

# WHATWG form style, as the service signs: space is "+", "*" kept, "~" is "%7E" (urlencode keeps "~").
FORM_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._")


def form_encode(text):
    out = []
    for byte in text.encode("utf-8"):
        if byte == 0x20:
            out.append("+")
        elif byte in FORM_SAFE:
            out.append(chr(byte))
        else:
            out.append("%%%02X" % byte)
    return "".join(out)


def parse_form(body):
    """The fields of an application/x-www-form-urlencoded body; None when a field repeats."""
    fields = {}
    for pair in body.split("&"):
        if pair == "":
            continue
        key, _, value = pair.partition("=")
        key, value = unquote_plus(key), unquote_plus(value)
        if key in fields:
            return None
        fields[key] = value
    return fields


def verify_callback(body, api_key):
    """True when the callback's signature matches its other fields."""
    fields = parse_form(body)
    if fields is None or "signature" not in fields:
        return False
    received = fields.pop("signature").lower()
    # Keys sorted by UTF-16 code unit, as JavaScript sorts them.
    keys = sorted(fields, key=lambda k: k.encode("utf-16-be"))
    message = "&".join(form_encode(k) + "=" + form_encode(fields[k]) for k in keys)
    key = bytes.fromhex(api_key.replace("-", ""))  # 16 raw bytes, never the ASCII text
    expected = hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()[:16]
    # As bytes: compare_digest raises on a str with non-ASCII characters, which a forger may send.
    return hmac.compare_digest(expected.encode("ascii"), received.encode("utf-8"))


if __name__ == "__main__":
    valid = verify_callback(sys.stdin.read(), sys.argv[1])
    print("valid" if valid else "invalid")
    sys.exit(0 if valid else 1)
