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

    /// `file:line: message`, or `file: message`, always one line: line breaks and other
    /// control characters in names that came from the input (a header, a path) are escaped.
    public var description: String {
        let text = line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)"
        return ReadableKey.escapingControls(text)
    }
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
