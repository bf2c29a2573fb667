import DiffEngine
import DiffEngineCommand
import DiffEngineFiles
import Foundation

/// The JSON canonicaliser on untrusted text. Any input: no crash, no hang. Valid UTF-8 that
/// parses: the canonical encoding, printed back as JSON text and canonicalised again, is
/// the same (the encoding says exactly what the value is); and a document `append` agrees.
public func fuzzJSON(_ data: UnsafeRawBufferPointer) {
    let canonical: [UInt8]
    do throws(JSONSyntaxError) {
        canonical = try canonicalJSON(data)
    } catch {
        return
    }
    guard firstInvalidUTF8Byte(in: data) == nil else { return }
    let printed = Array(ReadableKey.json(canonical[...]).utf8)
    let again = printed.withUnsafeBytes { try? canonicalJSON($0) }
    if again != canonical {
        fail("canonical JSON does not round-trip", problems: [], details: "canonical: \(canonical)\n  printed: \(String(decoding: printed, as: UTF8.self))", input: Array(data))
    }
    var documents = JSONDocuments(keys: ["id"])
    if case .success(let row) = Result(catching: { () throws(JSONDocumentError) in try documents.append(json: data) }) {
        if Array(documents.canonicalBytes[row.content]) != canonical {
            fail("JSONDocuments.append encodes differently", problems: [], details: "", input: Array(data))
        }
    }
}

/// The streaming table readers on untrusted bytes, through a file as `diffengine` reads
/// them. Any input: no crash, no hang, a one-line error or rows. Rows: lines and offsets
/// increasing. A window of 1-64 bytes (chosen by the first byte, so records straddle
/// window ends) reads exactly what the ordinary 4 MiB window reads — or fails the same way.
/// The file diffed against itself is unchanged.
public func fuzzCSV(_ data: UnsafeRawBufferPointer) {
    fuzzTable(data, json: false)
}

/// The JSON Lines reader as `fuzzCSV` checks the CSV one (key member `id`).
public func fuzzJSONLines(_ data: UnsafeRawBufferPointer) {
    fuzzTable(data, json: true)
}

private func fuzzTable(_ data: UnsafeRawBufferPointer, json: Bool) {
    guard let first = data.first else { return }
    let body = UnsafeRawBufferPointer(rebasing: data.dropFirst())
    let path = FuzzFile.shared.write(body)
    func read(window: Int) -> Result<TableRows, InputError> {
        Result { () throws(InputError) in
            let file = try InputFile(path: path)
            var reader = TableReader()
            reader.windowCapacity = window
            if json { return try reader.readJSONLines(file, keys: ["id"], only: nil, ignore: []) }
            let header = try TableReader.header(of: file, delimiter: UInt8(ascii: ","), windowCapacity: window)
            guard let key = header.firstIndex(of: "id") else {
                throw InputError(file: path, line: 1, message: "no key column 'id' in the header")
            }
            return try reader.readDelimited(file, delimiter: UInt8(ascii: ","), headerCount: header.count, keys: [key],
                                            columns: header.indices.map { $0 }, canonicalDelimiter: UInt8(ascii: ","))
        }
    }
    let wide = read(window: 4 << 20), narrow = read(window: Int(first % 64) + 1)
    switch (wide, narrow) {
    case (.failure(let error), .failure(let other)):
        if error.description.contains("\n") { fail("a multi-line error", problems: [error.description], details: "", input: Array(data)) }
        if error.description != other.description {
            fail("a narrow window fails differently", problems: [error.description, other.description], details: "", input: Array(data))
        }
    case (.success(let rows), .success(let other)):
        if rows.keyHashes != other.keyHashes || rows.contentHashes != other.contentHashes || rows.lines != other.lines
            || rows.offsets != other.offsets || rows.keyBytes != other.keyBytes {
            fail("a narrow window reads different rows", problems: [], details: "\(rows.lines) vs \(other.lines)", input: Array(data))
        }
        if zip(rows.lines, rows.lines.dropFirst()).contains(where: { $0 >= $1 }) || zip(rows.offsets, rows.offsets.dropFirst()).contains(where: { $0 >= $1 }) {
            fail("record lines or offsets do not increase", problems: ["\(rows.lines)"], details: "", input: Array(data))
        }
        // Against itself, with every pair listed: each row pairs with itself, once.
        let arguments = [path, path, "--key", "id", "--input", json ? "jsonl" : "csv", "--format", "jsonl", "--unchanged", "--whole-rows"]
        guard let command = try? DiffEngineCommand.parse(arguments), let output = try? command.output() else {
            fail("the file does not diff against itself", problems: [], details: "", input: Array(data))
            return
        }
        let text = String(decoding: output.bytes, as: UTF8.self)
        if output.differs { fail("a file differs from itself", problems: [], details: text, input: Array(data)) }
        let entries = text.split(separator: "\n")
        let selfPairs = entries.filter { entry in
            guard entry.hasPrefix("{\"change\":\"unchanged\""), let old = entry.firstRange(of: ",\"oldRow\":"),
                  let new = entry.firstRange(of: ",\"newRow\":") else { return false }
            return entry[old.upperBound...].prefix(while: \.isNumber) == entry[new.upperBound...].prefix(while: \.isNumber)
        }
        if entries.count != rows.count || selfPairs.count != rows.count {
            fail("rows do not each pair with themselves", problems: ["\(rows.count) rows, \(entries.count) entries, \(selfPairs.count) self-pairs"],
                 details: text, input: Array(data))
        }
    default:
        fail("one window fails and the other reads", problems: ["\(wide)", "\(narrow)"], details: "", input: Array(data))
    }
}

/// One scratch file per process that each input overwrites.
final class FuzzFile: @unchecked Sendable {
    static let shared = FuzzFile()
    let path = "/dev/shm/diffengine-fuzz-\(getpid())"
    private init() {
        atexit { unlink("/dev/shm/diffengine-fuzz-\(getpid())") }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> String {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(descriptor >= 0, "cannot write \(path)")
        var written = 0
        while written < bytes.count {
            let result = Glibc.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
            precondition(result > 0, "cannot write \(path)")
            written += result
        }
        close(descriptor)
        return path
    }
}
