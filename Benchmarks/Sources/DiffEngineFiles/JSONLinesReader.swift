import DiffEngine
import Foundation

/// Reads JSON Lines: one JSON object a line; blank lines are skipped. Identity: the key
/// members' values; content: the whole object by value (see `JSONDocuments`).
public struct JSONLinesReader {
    /// Creates a reader.
    public init() {}

    /// Adds every object of `file` to `documents` and returns the rows with their lines.
    /// - Throws: `InputError` naming `path` and the line of the first bad one.
    public func read(_ file: MappedFile, path: String, into documents: inout JSONDocuments) throws(InputError) -> FileRows {
        var result = FileRows(path: path)
        var failure: InputError?
        let buffer = file.bytes
        guard let base = buffer.baseAddress else { return result }
        var lineStart = 0
        var line = 1
        while lineStart < buffer.count && failure == nil {
            let newline = memchr(base + lineStart, 0x0A, buffer.count - lineStart).map { UnsafeRawPointer($0) - base } ?? buffer.count
            var lineEnd = newline
            if lineEnd > lineStart && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
            let text = UnsafeRawBufferPointer(rebasing: buffer[lineStart..<lineEnd])
            if text.contains(where: { $0 != 0x20 && $0 != 0x09 }) {
                do throws(JSONDocumentError) {
                    result.rows.append(try documents.append(json: text)) // validates UTF-8 too
                    result.lines.append(Int32(truncatingIfNeeded: line))
                } catch {
                    let detail: String = switch error {
                    case .syntax(let syntax) where syntax.message == "invalid UTF-8": "invalid UTF-8"
                    case .syntax(let syntax): "invalid JSON at column \(syntax.offset + 1): \(syntax.message)"
                    case .notAnObject: "expected a JSON object"
                    case .missingKey(let key): "no key '\(key)'"
                    }
                    failure = InputError(file: path, line: line, message: detail)
                }
            }
            lineStart = newline + 1
            line += 1
        }
        if let failure { throw failure }
        return result
    }
}
