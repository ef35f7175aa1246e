/// TPM manufacturer identifiers, as they appear in an AIK certificate's subjectAltName (`tcg-at-tpmManufacturer`,
/// "id:" followed by the 4-byte vendor ID in upper-case hexadecimal; TCG EK Credential Profile §3.2.9).
///
/// Source: TCG "TPM Vendor ID Registry, Family 1.2 and 2.0", Version 1.07 Revision 0.02 (the IDs, as facts). The
/// FIDO conformance tools' test vendor (`id:FFFFF1D0`) is not in the registry and not in this list; a test that
/// uses conformance-tool statements adds it to ``AttestationTrust/tpmManufacturers`` itself.
public enum TPMVendors {
    /// Vendor ID → vendor name.
    public static let registry: [String: String] = [
        "id:414D4400": "AMD",
        "id:414E5400": "Ant Group",
        "id:41544D4C": "Atmel",
        "id:4252434D": "Broadcom",
        "id:4353434F": "Cisco",
        "id:464C5953": "Flyslice Technologies",
        "id:524F4343": "Fuzhou Rockchip",
        "id:474F4F47": "Google",
        "id:48504900": "HPI",
        "id:48504500": "HPE",
        "id:48495349": "Huawei",
        "id:49424D00": "IBM",
        "id:49465800": "Infineon",
        "id:494E5443": "Intel",
        "id:4C454E00": "Lenovo",
        "id:4D534654": "Microsoft",
        "id:4E534D20": "National Semiconductor",
        "id:4E545A00": "Nationz",
        "id:4E534700": "NSING",
        "id:4E544300": "Nuvoton Technology",
        "id:51434F4D": "Qualcomm",
        "id:534D534E": "Samsung",
        "id:53454345": "SecEdge",
        "id:534E5300": "Sinosun",
        "id:534D5343": "SMSC",
        "id:53544D20": "STMicroelectronics",
        "id:54584E00": "Texas Instruments",
        "id:57454300": "Winbond",
        "id:5345414C": "Wisekey",
    ]

    /// Every registered vendor ID.
    public static let all: Set<String> = Set(registry.keys)
}
