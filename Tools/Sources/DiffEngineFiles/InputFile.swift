import Foundation

/// One input of the file differ, readable twice: once in order while the table is built,
/// and again at chosen offsets for the rows the output shows.
///
/// A regular file is read where it is. Anything else — `-` (standard input), a pipe, a
/// FIFO, a process substitution such as `<(zcat old.csv.gz)` — is first copied to an
/// unlinked temporary file, so it streams in once and costs disk cache, not memory.
/// Reading goes through `read`/`pread` into small buffers: the page cache holds the
/// bytes, and the process keeps only what the diff needs.
public final class InputFile {
    /// The name used in messages: the path, or "standard input" for `-`.
    public let name: String
    /// The size in bytes (after copying, for streams).
    public let size: Int
    /// Bytes to skip at the start: 3 when the file starts with a UTF-8 byte order mark.
    public let start: Int
    private let descriptor: Int32
    private let ownsDescriptor: Bool

    /// Opens `path` (`-` for standard input).
    /// - Throws: `InputError` naming the file when it cannot be opened or copied.
    public init(path: String) throws(InputError) {
        name = path == "-" ? "standard input" : path
        let opened: Int32
        if path == "-" {
            opened = STDIN_FILENO
        } else {
            // A FIFO's open waits for its writer, as `cat` does; every read after that streams.
            opened = open(path, O_RDONLY)
            guard opened >= 0 else {
                throw InputError(file: path, line: nil, message: "cannot open: \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard fstat(opened, &info) == 0 else {
            if path != "-" { close(opened) }
            throw InputError(file: name, line: nil, message: "cannot read: \(String(cString: strerror(errno)))")
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            descriptor = opened
            ownsDescriptor = path != "-"
            size = Int(info.st_size)
        case S_IFDIR:
            if path != "-" { close(opened) }
            throw InputError(file: name, line: nil, message: "is a directory")
        default:
            let spooled: (Int32, Int)
            do throws(InputError) {
                spooled = try InputFile.spool(opened, name: name)
            } catch {
                if path != "-" { close(opened) }
                throw error
            }
            if path != "-" { close(opened) }
            descriptor = spooled.0
            ownsDescriptor = true
            size = spooled.1
        }
        var mark = [UInt8](repeating: 0, count: 3)
        let readable = descriptor
        let got = mark.withUnsafeMutableBytes { pread(readable, $0.baseAddress, 3, 0) }
        start = got == 3 && mark == [0xEF, 0xBB, 0xBF] ? 3 : 0
    }

    deinit {
        if ownsDescriptor { close(descriptor) }
    }

    /// Copies a stream to an unlinked temporary file; returns its descriptor and size.
    private static func spool(_ source: Int32, name: String) throws(InputError) -> (Int32, Int) {
        let folder = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(folder)/diffengine-XXXXXX".utf8CString)
        let target = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard target >= 0 else {
            throw InputError(file: name, line: nil, message: "cannot make a temporary file in \(folder) to hold the stream: \(String(cString: strerror(errno)))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var total = 0
        while true {
            let got = Glibc.read(source, buffer, chunk)
            if got < 0 && errno == EINTR { continue }
            if got < 0 {
                close(target)
                throw InputError(file: name, line: nil, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            var written = 0
            while written < got {
                let result = write(target, buffer + written, got - written)
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else {
                    close(target)
                    throw InputError(file: name, line: nil, message: "cannot hold the stream in a temporary file: \(String(cString: strerror(errno)))")
                }
                written += result
            }
            total += got
        }
        return (target, total)
    }

    /// Reads up to `count` bytes at `offset` into `buffer`; returns how many were read
    /// (fewer only at the end of the file).
    public func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) throws(InputError) -> Int {
        var done = 0
        while done < count {
            let got = pread(descriptor, buffer + done, count - done, off_t(offset + done))
            if got < 0 && errno == EINTR { continue }
            if got < 0 {
                throw InputError(file: name, line: nil, message: "read failed: \(String(cString: strerror(errno)))")
            }
            if got == 0 { break }
            done += got
        }
        return done
    }
}

/// A growable byte window over an `InputFile`: the scanners see `bytes[0..<count]`, which
/// holds the file from `offset`. Reads are sequential and large; a record longer than the
/// window doubles it, so a long record is scanned a bounded number of times.
public struct FileWindow: ~Copyable {
    /// The file this window reads.
    public let file: InputFile
    /// The file offset of `bytes[0]`.
    public private(set) var offset: Int
    /// How many bytes of the window hold file data.
    public private(set) var count = 0
    /// The window's storage.
    public private(set) var bytes: UnsafeMutableRawBufferPointer

    /// A window starting at `offset`, `capacity` bytes wide at first.
    public init(file: InputFile, offset: Int, capacity: Int = 4 << 20) {
        self.file = file
        self.offset = offset
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        bytes.deallocate()
    }

    /// Whether the window reaches the end of the file.
    public var atEnd: Bool { offset + count >= file.size }

    /// Moves the window so that it starts at file offset `position` and holds as much as
    /// fits; grows it first when `minimum` bytes from `position` would not fit.
    public mutating func fill(from position: Int, minimum: Int = 0) throws(InputError) {
        if minimum > bytes.count {
            var capacity = bytes.count
            while capacity < minimum { capacity *= 2 }
            let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
            bytes.deallocate()
            bytes = grown
            count = 0
        }
        let keep = position >= offset && position < offset + count ? offset + count - position : 0
        if keep > 0 && position != offset {
            bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + (position - offset), byteCount: keep)
        }
        offset = position
        count = keep
        let wanted = Swift.min(bytes.count - keep, file.size - (position + keep))
        if wanted > 0 {
            let got = try file.read(into: bytes.baseAddress! + keep, count: wanted, at: position + keep)
            guard got == wanted else {
                throw InputError(file: file.name, line: nil, message: "the file changed while it was read")
            }
            count += got
        }
    }
}
