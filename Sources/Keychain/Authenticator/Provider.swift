/// Who the keychain says it is in the passkeys it makes.
public enum KeychainProvider {
    /// The keychain's AAGUID, chosen once at random (a version 4 UUID) and never changed: relying parties show
    /// passkeys with it as "Sesame Keychain" (the name in Sesame's provider list). With attestation "none" nobody
    /// vouches for it, so it is for display only.
    public static let aaguidString = "fbae9a5b-c577-444c-ab08-4fbf3dadd3a1"
    public static let aaguid: [UInt8] = [
        0xfb, 0xae, 0x9a, 0x5b, 0xc5, 0x77, 0x44, 0x4c, 0xab, 0x08, 0x4f, 0xbf, 0x3d, 0xad, 0xd3, 0xa1,
    ]
    public static let name = "Sesame Keychain"
}
