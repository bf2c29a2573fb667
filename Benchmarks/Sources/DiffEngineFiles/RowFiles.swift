@_spi(Files) import DiffEngine
import Foundation

/// Input that cannot be diffed: a one-line message naming the file and, where known, the line.
public struct InputError: Error, CustomStringConvertible {
    /// The file (or option) at fault.
    public var file: String
    /// The 1-based line, when one is at fault.
    public var line: Int?
    /// What is wrong, in a few words.
    public var message: String

    /// Creates an error.
    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`, or `file: message`.
    public var description: String {
        line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)"
    }
}

/// The rows of one file: byte spans into the shared buffer, and each row's first line.
public struct FileRows {
    /// The file the rows come from.
    public var path: String
    /// The rows, in file order.
    public var rows: [ByteRow] = []
    /// The 1-based line where each row starts.
    public var lines: [Int32] = []

    /// Creates an empty list of rows of `path`.
    public init(path: String) {
        self.path = path
    }
}

/// The formats the file differ reads.
public enum FileFormat: String, CaseIterable, Sendable {
    case csv, jsonl

    /// The format of a path by its extension, if it tells.
    public init?(path: String) {
        switch (path as NSString).pathExtension.lowercased() {
        case "csv": self = .csv
        case "jsonl", "ndjson": self = .jsonl
        default: return nil
        }
    }
}

/// Opens `path` for reading; it must be a regular file. Returns the descriptor (the
/// caller closes it) and the size.
public func openRegularFile(_ path: String) throws(InputError) -> (descriptor: Int32, size: Int) {
    // Non-blocking, so that a FIFO with no writer is refused below instead of hanging here.
    let descriptor = open(path, O_RDONLY | O_NONBLOCK)
    guard descriptor >= 0 else {
        throw InputError(file: path, line: nil, message: "cannot open: \(String(cString: strerror(errno)))")
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
        close(descriptor)
        throw InputError(file: path, line: nil, message: "not a regular file")
    }
    _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
    return (descriptor, Int(info.st_size))
}

/// Writes all of `bytes` to standard output; a failed write (a full disk, a closed
/// descriptor) is an `InputError` naming standard output, so the command exits 2 with one
/// line instead of a crash.
public func writeToStandardOutput(_ bytes: [UInt8]) throws(InputError) {
    var written = 0
    while written < bytes.count {
        let result = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + written, bytes.count - written) }
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else {
            throw InputError(file: "standard output", line: nil, message: "write failed: \(String(cString: strerror(errno)))")
        }
        written += result
    }
}

/// Reads files whole into one buffer (old then new), so that byte rows of both sides are
/// spans of a single buffer and are hashed in C straight from it.
public func readFiles(_ paths: [String]) throws(InputError) -> (bytes: [UInt8], ranges: [Range<Int>]) {
    var sizes: [Int] = []
    var descriptors: [Int32] = []
    defer { descriptors.forEach { _ = close($0) } }
    for path in paths {
        let (descriptor, size) = try openRegularFile(path)
        descriptors.append(descriptor)
        sizes.append(size)
    }
    let total = sizes.reduce(0, +)
    var ranges: [Range<Int>] = []
    var failure: InputError?
    var bytes = [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
        var offset = 0
        for (index, descriptor) in descriptors.enumerated() where failure == nil {
            let start = offset
            while offset < start + sizes[index] {
                let got = read(descriptor, buffer.baseAddress! + offset, start + sizes[index] - offset)
                if got <= 0 {
                    failure = InputError(file: paths[index], line: nil, message: got == 0 ? "file shrank while reading" : "read failed: \(String(cString: strerror(errno)))")
                    break
                }
                offset += got
            }
            ranges.append(start..<offset)
        }
        initialized = offset
    }
    if let failure { throw failure }
    bytes.reserveCapacity(total + total / 16 + 64) // room for canonical re-encodings
    return (bytes, ranges)
}

/// The 1-based line of byte `offset` within `range`.
public func lineNumber(of offset: Int, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
    var line = 1
    for index in start..<offset where bytes[index] == UInt8(ascii: "\n") { line += 1 }
    return line
}

/// Throws an `InputError` naming the line of the first invalid UTF-8 byte in `range`.
public func checkUTF8(_ bytes: [UInt8], _ range: Range<Int>, file: String) throws(InputError) {
    let invalid = bytes.withUnsafeBytes { buffer in
        firstInvalidUTF8Byte(in: UnsafeRawBufferPointer(rebasing: buffer[range])).map { ($0 + range.lowerBound, lineNumber(of: $0 + range.lowerBound, in: buffer, from: range.lowerBound)) }
    }
    if let (_, line) = invalid { throw InputError(file: file, line: line, message: "invalid UTF-8") }
}

/// A file mapped read-only into memory: no copy, no zero-filled pages.
public final class MappedFile {
    /// The file's bytes, valid while the object lives.
    public let bytes: UnsafeRawBufferPointer

    /// Maps the regular file at `path`.
    public init(path: String) throws(InputError) {
        let (descriptor, size) = try openRegularFile(path)
        defer { close(descriptor) }
        guard size > 0 else {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, descriptor, 0), mapping != MAP_FAILED else {
            throw InputError(file: path, line: nil, message: "cannot map: \(String(cString: strerror(errno)))")
        }
        madvise(mapping, size, MADV_SEQUENTIAL)
        bytes = UnsafeRawBufferPointer(start: mapping, count: size)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}
