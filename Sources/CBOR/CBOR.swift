/// Strict CTAP2-canonical CBOR.
