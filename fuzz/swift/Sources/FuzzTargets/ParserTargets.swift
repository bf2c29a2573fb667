@_spi(Files) import DiffEngine
import DiffEngineFiles

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

/// The CSV reader on untrusted bytes (key column `id`). Any input: no crash, no hang, a
/// one-line error or rows. Rows: spans inside the buffer, lines increasing, and the file
/// diffed against itself is unchanged.
public func fuzzCSV(_ data: UnsafeRawBufferPointer) {
    var bytes = Array(data)
    let range = 0..<bytes.count
    let rows: FileRows
    do throws(InputError) {
        try checkUTF8(bytes, range, file: "fuzz.csv")
        rows = try CSVReader(keys: ["id"]).read(&bytes, range, file: "fuzz.csv")
    } catch {
        if error.description.contains("\n") { fail("a multi-line error", problems: [error.description], details: "", input: Array(data)) }
        return
    }
    for row in rows.rows where row.identity.upperBound > bytes.count || row.content.upperBound > bytes.count {
        fail("a row span outside the buffer", problems: ["\(row)"], details: "", input: Array(data))
    }
    if zip(rows.lines, rows.lines.dropFirst()).contains(where: { $0 >= $1 }) {
        fail("record lines do not increase", problems: ["\(rows.lines)"], details: "", input: Array(data))
    }
    let adapter = ByteRowAdapter(bytes: bytes)
    let same = try! diff(rows.rows, rows.rows, using: adapter)
    if same.hasChanges { fail("a file differs from itself", problems: ["\(same)"], details: "", input: Array(data)) }
}

