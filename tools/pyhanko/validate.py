"""Validates the signatures of PDFs with pyHanko and prints one JSON line per file (used by the tests).

Usage: python3 tools/pyhanko/validate.py --trust root.pem [--ltv pades|pades-lta] file.pdf...

Without --ltv each signature is validated with the trust root (revocation checking soft-fail, no fetching) and
each document time-stamp with validate_pdf_timestamp. With --ltv the signatures are validated as long-term
signatures (validate_pdf_ltv_signature, PAdES or PAdES-LTA) from the revocation data the file carries (no
fetching: pyHanko only uses the file's DSS and what is embedded in the signatures).
"""

import argparse
import json
import sys

from pyhanko.keys import load_cert_from_pemder
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign.validation import (
    RevocationInfoValidationType,
    validate_pdf_ltv_signature,
    validate_pdf_signature,
    validate_pdf_timestamp,
)
from pyhanko_certvalidator import ValidationContext


def describe(status, kind, field):
    out = {
        "field": field,
        "kind": kind,
        "intact": bool(getattr(status, "intact", False)),
        "valid": bool(getattr(status, "valid", False)),
        "trusted": bool(getattr(status, "trusted", False)),
        "bottom_line": bool(getattr(status, "bottom_line", False)),
    }
    coverage = getattr(status, "coverage", None)
    if coverage is not None:
        out["coverage"] = coverage.name
    modification = getattr(status, "modification_level", None)
    if modification is not None:
        out["modification_level"] = modification.name
    try:
        out["summary"] = status.summary()
    except Exception:  # noqa: BLE001 - a summary is only for the log
        pass
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--trust", required=True)
    parser.add_argument("--ltv", choices=["pades", "pades-lta"])
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    root = load_cert_from_pemder(args.trust)
    for path in args.files:
        result = {"file": path, "ltv": args.ltv, "signatures": []}
        try:
            with open(path, "rb") as f:
                reader = PdfFileReader(f)
                for sig in reader.embedded_signatures:
                    kind = "timestamp" if sig.sig_object_type == "/DocTimeStamp" else "signature"
                    if kind == "timestamp":
                        status = validate_pdf_timestamp(
                            sig, validation_context=ValidationContext(trust_roots=[root])
                        )
                    elif args.ltv:
                        status = validate_pdf_ltv_signature(
                            sig,
                            RevocationInfoValidationType.PADES_LTA
                            if args.ltv == "pades-lta"
                            else RevocationInfoValidationType.PADES_LT,
                            validation_context_kwargs={"trust_roots": [root]},
                        )
                    else:
                        status = validate_pdf_signature(
                            sig, signer_validation_context=ValidationContext(trust_roots=[root])
                        )
                    result["signatures"].append(describe(status, kind, sig.field_name))
        except Exception as err:  # noqa: BLE001 - reported to the test as the file's error
            result["error"] = f"{type(err).__name__}: {err}"
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
