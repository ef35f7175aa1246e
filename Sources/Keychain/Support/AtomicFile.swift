#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Files the keychain owns: written whole or not at all, readable by their owner only.
///
/// A write goes to a new temporary file in the same directory (mode 0600, `O_EXCL`), is flushed with `fsync`,
/// renamed over the target (atomic on POSIX file systems) and the directory is flushed too. A crash leaves either
/// the old file or the new one, never a mix; a failed write leaves the old file as it was.
enum AtomicFile {
    /// The largest file read: vaults of tens of thousands of items stay far below it.
    static let maximumSize = 256 * 1024 * 1024

    static func read(_ path: String, maximumSize: Int = AtomicFile.maximumSize) throws(KeychainError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw KeychainError(.fileSystem, reason: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw KeychainError(.fileSystem, reason: "cannot stat \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainError(.fileSystem, reason: "\(path) is not a regular file")
        }
        guard info.st_size <= maximumSize else {
            throw KeychainError(.corruptFile, reason: "\(path) is larger than \(maximumSize) bytes")
        }
        var out = [UInt8](repeating: 0, count: Int(info.st_size))
        var offset = 0
        while offset < out.count {
            let n = out[offset...].withUnsafeMutableBytes { posixRead(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw KeychainError(.fileSystem, reason: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            offset += n
        }
        return Array(out.prefix(offset))
    }

    static func write(_ bytes: [UInt8], to path: String) throws(KeychainError) {
        let directory = Self.directory(of: path)
        let temporary =
            directory + "/." + Self.baseName(of: path) + ".tmp-" + Crockford32.encode(SecureRandom.bytes(10))
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeychainError(.fileSystem, reason: "cannot create \(temporary): \(String(cString: strerror(errno)))")
        }
        var failure: KeychainError?
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { posixWrite(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = KeychainError(
                    .fileSystem, reason: "cannot write \(path): \(String(cString: strerror(errno)))")
                break
            }
            offset += n
        }
        if failure == nil, fsync(fd) != 0 {
            failure = KeychainError(.fileSystem, reason: "cannot flush \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw KeychainError(.fileSystem, reason: "cannot replace \(path): \(message)")
        }
        syncDirectory(directory)
    }

    /// Removes a file; a missing file is not an error.
    static func remove(_ path: String) throws(KeychainError) {
        if unlink(path) != 0 && errno != ENOENT {
            throw KeychainError(.fileSystem, reason: "cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        syncDirectory(directory(of: path))
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// Creates the directory (and its parents) with mode 0700 when missing.
    static func makeDirectory(_ path: String) throws(KeychainError) {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw KeychainError(
                    .fileSystem, reason: "cannot create \(partial): \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func baseName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

/// An exclusive advisory lock (`flock`) on a file in the vault directory, held while one command reads, changes
/// and writes the vault, so two `sesame keychain` processes never interleave their writes. Waits at most
/// `timeout` seconds for another holder, then reports the vault busy rather than hanging.
final class DirectoryLock {
    private let fd: Int32

    init(path: String, timeout: Double = 15) throws(KeychainError) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw KeychainError(
                .fileSystem, reason: "cannot open lock file \(path): \(String(cString: strerror(errno)))")
        }
        var waited = 0.0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, waited < timeout else {
                close(fd)
                throw KeychainError(.fileSystem, reason: "\(path) is held by another sesame process")
            }
            usleep(20_000)
            waited += 0.02
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}
