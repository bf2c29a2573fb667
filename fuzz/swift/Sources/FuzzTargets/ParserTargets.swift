import DiffEngine
import DiffEngineCommand
import DiffEngineFiles
import Foundation

/// The JSON canonicaliser on untrusted text. Any input: no crash, no hang. Valid UTF-8 that
/// parses: every object's members are in strictly increasing order of their names' bytes
/// (checked here, not with the encoder's own comparison); the canonical encoding, printed
/// back as JSON text and canonicalised again, is the same (the encoding says exactly what the
/// value is); and a document `append` agrees. Also, the input's lines through one reused
/// encoder (which carries the last object's member order over) encode as each line alone.
public func fuzzJSON(_ data: UnsafeRawBufferPointer) {
    checkReusedEncoder(data)
    let canonical: [UInt8]
    do throws(JSONSyntaxError) {
        canonical = try canonicalJSON(data)
    } catch {
        return
    }
    guard firstInvalidUTF8Byte(in: data) == nil else { return }
    if !membersAreOrdered(canonical[...], from: canonical.startIndex) {
        fail("canonical JSON has members out of order", problems: [], details: "canonical: \(canonical)", input: Array(data))
    }
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

/// Whether every object in the canonical value at `start` lists its members in strictly
/// increasing order of their names (a repeated name is kept once).
private func membersAreOrdered(_ bytes: ArraySlice<UInt8>, from start: Int) -> Bool {
    guard start < bytes.endIndex else { return false }
    switch bytes[start] {
    case UInt8(ascii: "{"):
        var members: [CanonicalMember] = []
        guard let end = CanonicalMember.skipValue(bytes, start),
              CanonicalMember.members(of: bytes[start..<end], into: &members) != nil else { return false }
        for (previous, member) in zip(members, members.dropFirst())
        where !bytes[previous.name].lexicographicallyPrecedes(bytes[member.name]) {
            return false
        }
        return members.allSatisfy { membersAreOrdered(bytes, from: $0.value.lowerBound) }
    case UInt8(ascii: "["):
        var index = start + 1
        while index < bytes.endIndex && bytes[index] != UInt8(ascii: "]") {
            guard membersAreOrdered(bytes, from: index), let next = CanonicalMember.skipValue(bytes, index) else { return false }
            index = next
        }
        return index < bytes.endIndex
    default:
        return CanonicalMember.skipValue(bytes, start) != nil
    }
}

/// Each line of `data` through one reused `CanonicalJSONEncoder` against `canonicalJSON` of
/// the line alone: the same encoding, or the same failure.
private func checkReusedEncoder(_ data: UnsafeRawBufferPointer) {
    var encoder = CanonicalJSONEncoder()
    for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
        let text = UnsafeRawBufferPointer(rebasing: line)
        let alone = try? canonicalJSON(text)
        let reused: [UInt8]?
        do throws(JSONSyntaxError) {
            try encoder.encode(text)
            reused = encoder.encoded
        } catch {
            reused = nil
        }
        if reused != alone {
            fail("a reused CanonicalJSONEncoder encodes a line differently", problems: [],
                 details: "line: \(Array(text))", input: Array(data))
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
    guard let window = data.first else { return }
    let body = UnsafeRawBufferPointer(rebasing: data.dropFirst())
    if body.first == TableSpelling.marker {
        let text = TableSpelling.spell(UnsafeRawBufferPointer(rebasing: body.dropFirst()), json: json)
        text.withUnsafeBytes { checkTable($0, window: window, json: json, input: data) }
    } else {
        checkTable(body, window: window, json: json, input: data)
    }
}

/// Tables spelled from choices, so that the table readers' checks see valid tables with
/// repeated keys most of the time. Fuzzed as bytes, 96% of `fuzz_jsonl`'s executions stopped
/// at a line that was not JSON or had no `id`, and 1% read two rows or more (measured over
/// 200,000 executions from the committed corpus). An input whose table starts with 0xFF
/// (never the start of UTF-8 text) is read as choices instead: each row takes a key from a
/// few spellings, so that keys repeat and spellings that must read as equal or as different
/// meet, and up to three more fields; a byte a choice, the line end and layout from spare
/// bits. Mutating the choices changes rows, not syntax.
enum TableSpelling {
    static let marker: UInt8 = 0xFF

    /// JSON values: equal ones spelled differently (`1`, `1.0`, `1e0`; `"é"` and its escape;
    /// members in either order), near ones that are not equal (`1` and `"1"`, `""` and
    /// `null`), and long, nested or escaped ones.
    static let jsonValues = [
        "1", "1.0", "\"1\"", "1e0", "null", "\"\"", "\"é\"", "\"\\u00e9\"",
        "-0", "0", "true", "false", "[]", "{}", "[1,[2,null]]", "{\"a\":1,\"b\":[]}", "{\"b\":[],\"a\":1}",
        "\"a\\nb\"", "\"\\ud83d\\ude00\"", "12345678901234567890", "0.1", "-1E-7", "\"a,b\"", "\" \"",
    ]
    static let jsonNames = ["v", "w", "é", "a b", "\\u0076"]

    /// CSV fields: the same text quoted and not, quoted separators, quotes and line breaks,
    /// empty and blank fields.
    static let csvFields = [
        "1", "a", "\"a\"", "", "01", "\"\"", "é", " a", "\"a,b\"", "\"a\"\"b\"", "\"x\ny\"", "\"x\r\ny\"", "null", "1.0",
    ]

    private static let jsonValueBytes = jsonValues.map { Array($0.utf8) }
    private static let jsonMemberStarts = jsonNames.map { Array("\"\($0)\":".utf8) }
    private static let csvFieldBytes = csvFields.map { Array($0.utf8) }

    /// The table that `choices` spell, as JSON Lines or CSV (key `id`). Written as bytes:
    /// joining `String`s took a thirteenth of each `fuzz_jsonl` execution.
    static func spell(_ choices: UnsafeRawBufferPointer, json: Bool) -> [UInt8] {
        var next = choices.makeIterator()
        var text: [UInt8] = []
        text.reserveCapacity(choices.count * 12)
        if json {
            // A row: the key's spelling (low bits; the first eight are the likeliest, so that
            // keys repeat) and layout (high bits), then the fields' count and a name and a
            // value for each.
            var members: [(start: [UInt8], value: [UInt8])] = []
            while let key = next.next(), let shape = next.next() {
                members.removeAll(keepingCapacity: true)
                members.append((Array(#""id":"#.utf8), jsonValueBytes[Int(key % 32) % jsonValues.count]))
                for _ in 0..<(shape % 4) {
                    guard let name = next.next(), let value = next.next() else { break }
                    members.append((jsonMemberStarts[Int(name) % jsonNames.count], jsonValueBytes[Int(value) % jsonValues.count]))
                }
                if key & 0x20 != 0 { members.reverse() }
                let spaced = key & 0x40 != 0
                text.append(UInt8(ascii: "{"))
                for (index, member) in members.enumerated() {
                    if index > 0 { text.append(contentsOf: spaced ? [UInt8(ascii: ","), UInt8(ascii: " ")] : [UInt8(ascii: ",")]) }
                    text.append(contentsOf: member.start)
                    text.append(contentsOf: member.value)
                }
                text.append(UInt8(ascii: "}"))
                if key & 0x80 != 0 { text.append(0x0D) }
                text.append(0x0A)
                if shape & 0x80 != 0 { text.append(0x0A) } // a blank line
            }
        } else {
            guard let layout = next.next() else { return [] }
            let columns = 1 + Int(layout % 4), keyColumn = Int(layout / 4) % columns
            let lineEnd: [UInt8] = layout & 0x80 != 0 ? [0x0D, 0x0A] : [0x0A]
            var header = (1..<columns).map { "v\($0)" }
            header.insert("id", at: keyColumn)
            text.append(contentsOf: header.joined(separator: ",").utf8)
            text.append(contentsOf: lineEnd)
            var column = 0
            var row: [UInt8] = []
            while let choice = next.next() {
                if column > 0 { row.append(UInt8(ascii: ",")) }
                row.append(contentsOf: csvFieldBytes[Int(column == keyColumn ? choice % 8 : choice) % csvFields.count])
                column += 1
                if column == columns {
                    text.append(contentsOf: row)
                    text.append(contentsOf: lineEnd)
                    row.removeAll(keepingCapacity: true)
                    column = 0
                }
            }
        }
        return text
    }
}

/// The checks of `fuzzCSV` on one table's bytes; `input` is what a failure reports. The
/// ordinary 4 MiB window's reading is the self-diff's own, of the file as old and as new:
/// a reading of its own took a quarter of each execution. A table that the narrow window
/// cannot read is read with the wide one to compare the errors.
private func checkTable(_ body: UnsafeRawBufferPointer, window first: UInt8, json: Bool, input data: UnsafeRawBufferPointer) {
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
    let wideWindow = 4 << 20
    precondition(TableReader().windowCapacity == wideWindow, "the self-diff no longer reads with the wide window")
    let rows: TableRows
    switch read(window: Int(first % 64) + 1) {
    case .failure(let error):
        switch read(window: wideWindow) {
        case .failure(let other):
            if other.description.contains("\n") { fail("a multi-line error", problems: [other.description], details: "", input: Array(data)) }
            if error.description != other.description {
                fail("a narrow window fails differently", problems: [other.description, error.description], details: "", input: Array(data))
            }
        case .success:
            fail("one window fails and the other reads", problems: [error.description], details: "", input: Array(data))
        }
        return
    case .success(let narrow):
        rows = narrow
    }
    if zip(rows.lines, rows.lines.dropFirst()).contains(where: { $0 >= $1 }) || zip(rows.offsets, rows.offsets.dropFirst()).contains(where: { $0 >= $1 }) {
        fail("record lines or offsets do not increase", problems: ["\(rows.lines)"], details: "", input: Array(data))
    }
    // Against itself, with every pair listed: each row pairs with itself, once.
    let output: (bytes: [UInt8], diff: TableDiff)
    do throws(InputError) {
        output = try SelfDiff.command(json: json, path: path).outputAndDiff()
    } catch {
        if case .failure = read(window: wideWindow) {
            fail("one window fails and the other reads", problems: [error.description], details: "", input: Array(data))
        }
        fail("the file does not diff against itself", problems: [error.description], details: "", input: Array(data))
    }
    for other in [output.diff.old, output.diff.new] {
        if rows.keyHashes != other.keyHashes || rows.contentHashes != other.contentHashes || rows.lines != other.lines
            || rows.offsets != other.offsets || rows.keyBytes != other.keyBytes {
            fail("a narrow window reads different rows", problems: [], details: "\(rows.lines) vs \(other.lines)", input: Array(data))
        }
    }
    if output.diff.hasDifferences {
        fail("a file differs from itself", problems: [], details: String(decoding: output.bytes, as: UTF8.self), input: Array(data))
    }
    let (entries, selfPairs) = SelfDiff.count(output.bytes)
    if entries != rows.count || selfPairs != rows.count {
        fail("rows do not each pair with themselves", problems: ["\(rows.count) rows, \(entries) entries, \(selfPairs) self-pairs"],
             details: String(decoding: output.bytes, as: UTF8.self), input: Array(data))
    }
}

/// The self-diff of the table harnesses: the command, parsed once (its file is the same
/// for every input), and the reading of its JSON Lines output as bytes. (Parsing the
/// arguments and splitting the output as text took half of each execution.)
enum SelfDiff {
    nonisolated(unsafe) private static var commands: [Bool: DiffEngineCommand] = [:]

    static func command(json: Bool, path: String) -> DiffEngineCommand {
        if let command = commands[json] { return command }
        let arguments = [path, path, "--key", "id", "--input", json ? "jsonl" : "csv", "--format", "jsonl", "--unchanged", "--whole-rows"]
        guard let command = try? DiffEngineCommand.parse(arguments) else { fail("the self-diff's arguments do not parse", problems: arguments, details: "", input: []) }
        commands[json] = command
        return command
    }

    private static let unchanged = Array(#"{"change":"unchanged""#.utf8)
    private static let oldRow = Array(#","oldRow":"#.utf8), newRow = Array(#","newRow":"#.utf8)

    /// The output's entries (lines), and how many of them are unchanged pairs of a row with
    /// itself (the same number after `oldRow` and `newRow`). Lines and labels are found
    /// with `memchr` and `memcmp`: splitting the output into arrays took a fifth of each
    /// execution.
    static func count(_ output: [UInt8]) -> (entries: Int, selfPairs: Int) {
        output.withUnsafeBytes { bytes in
            var entries = 0, selfPairs = 0, start = 0
            while start < bytes.count {
                let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
                let end = memchr(rest.baseAddress!, 0x0A, rest.count).map { $0 - UnsafeMutableRawPointer(mutating: bytes.baseAddress!) } ?? bytes.count
                defer { start = end + 1 }
                guard end > start else { continue } // an empty line is no entry
                entries += 1
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
                guard line.starts(with: unchanged), let old = number(after: oldRow, in: line),
                      let new = number(after: newRow, in: line) else { continue }
                if old.elementsEqual(new) { selfPairs += 1 }
            }
            return (entries, selfPairs)
        }
    }

    private static func number(after label: [UInt8], in line: UnsafeRawBufferPointer) -> Slice<UnsafeRawBufferPointer>? {
        label.withUnsafeBytes { label in
            var from = 0
            while line.count - from >= label.count {
                guard let hit = memchr(line.baseAddress! + from, Int32(label[0]), line.count - from - label.count + 1) else { return nil }
                let at = UnsafeRawPointer(hit) - line.baseAddress!
                if memcmp(hit, label.baseAddress!, label.count) == 0 {
                    return line[(at + label.count)...].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                }
                from = at + 1
            }
            return nil
        }
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
