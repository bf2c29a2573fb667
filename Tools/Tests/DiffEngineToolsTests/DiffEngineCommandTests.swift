import DiffEngine
import DiffEngineCommand
import Foundation
import Testing

/// Writes files into a fresh folder and runs `diffengine` on them in-process.
struct FileFixture {
    let folder: String

    init() throws {
        folder = NSTemporaryDirectory() + "diffbench-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = "\(folder)/\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func write(_ name: String, _ text: String) throws -> String { try write(name, Array(text.utf8)) }

    /// The output of `diffengine ARGUMENTS` and whether it found differences.
    func run(_ arguments: [String]) throws -> Result<(bytes: [UInt8], differs: Bool), InputError> {
        let command = try DiffEngineCommand.parse(arguments)
        do throws(InputError) {
            return .success(try command.output())
        } catch {
            return .failure(error)
        }
    }

    /// The index form (`--format indexes`).
    func diff(_ arguments: [String]) throws -> Result<Changeset, InputError> {
        try run(arguments + ["--format", "indexes"]).map { try! JSONDecoder().decode(Changeset.self, from: Data($0.bytes)) }
    }

    /// The keyed JSON form, parsed.
    func keyed(_ arguments: [String]) throws -> [String: Any] {
        let output = try run(arguments + ["--format", "json"]).get()
        return try #require(try JSONSerialization.jsonObject(with: Data(output.bytes)) as? [String: Any])
    }

    /// Text output (summary, jsonl, patch).
    func text(_ arguments: [String]) throws -> String {
        String(decoding: try run(arguments).get().bytes, as: UTF8.self)
    }

    func error(_ arguments: [String]) throws -> String? {
        if case .failure(let error) = try diff(arguments) { return error.description }
        return nil
    }
}

@Suite struct DiffEngineCommandTests {
    let csvOld = "id,name,price\n1,apple,3\n2,\"pear, green\",4\n3,\"say \"\"hi\"\"\",5\n4,kiwi,6\n"

    @Test func csvQuotingCRLFAndMultilineFields() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", csvOld)
        // Same values written with other quoting and CRLF; 3 updated, 4 deleted, 5 inserted.
        let new = try files.write("new.csv", "id,name,price\r\n\"2\",\"pear, green\",4\r\n1,\"apple\",3\r\n3,\"say \"\"hi\"\"\",7\r\n5,\"multi\nline\",1\r\n")
        let changes = try files.diff([old, new, "--key", "id"]).get()
        #expect(changes == Changeset(oldCount: 4, newCount: 4, deletions: [3], insertions: [3],
                                     updates: [IndexPair(old: 2, new: 2)], moves: [IndexPair(old: 0, new: 1)]))
    }

    /// Values go into JSON strings exactly: quotes (doubled in the CSV), backslashes, tabs,
    /// line breaks inside quotes, control bytes and multi-byte UTF-8, in a deleted and an
    /// inserted row (written from the file's bytes) and in an updated field (from a copy);
    /// line and row numbers past one digit.
    @Test func keyedOutputEscapesEveryValueExactly() throws {
        let files = try FileFixture()
        let values = ["say \"\"hi\"\"", "back\\slash", "tab\there", "line\nbreak", "bell\u{07}", "é ✓ 😀", ""]
        let expected = ["say \"hi\"", "back\\slash", "tab\there", "line\nbreak", "bell\u{07}", "é ✓ 😀", ""]
        let header = "id,text\n"
        let padding = (100..<112).map { "\($0),same\n" }.joined()
        let old = header + padding + values.enumerated().map { "\($0.offset),\"\($0.element)\"\n" }.joined()
        let new = header + padding + "1,\"\(values[0])\"\n" + values.enumerated().map { "\($0.offset + 10),\"\($0.element)\"\n" }.joined()
        let oldPath = try files.write("old.csv", old), newPath = try files.write("new.csv", new)
        for format in ["jsonl", "json"] {
            let output = try files.run([oldPath, newPath, "--key", "id", "--format", format]).get()
            let entries: [[String: Any]]
            if format == "jsonl" {
                entries = try output.bytes.split(separator: UInt8(ascii: "\n")).map {
                    try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])
                }
            } else {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(output.bytes)) as? [String: Any])
                entries = ["deleted", "inserted", "updated"].flatMap { kind in
                    ((object[kind] as? [[String: Any]]) ?? []).map { $0.merging(["change": kind]) { a, _ in a } }
                }
            }
            func texts(_ kind: String) -> [String: String] {
                var result: [String: String] = [:]
                for entry in entries where entry["change"] as? String == kind {
                    let values = entry["values"] as? [String: String]
                    result[values?["id"] ?? ""] = values?["text"]
                }
                return result
            }
            let deleted = texts("deleted"), inserted = texts("inserted")
            #expect(deleted.count == values.count - 1, "\(format)") // row 1 is updated
            for (index, text) in expected.enumerated() {
                if index != 1 { #expect(deleted["\(index)"] == text, "\(format) deleted \(index)") }
                #expect(inserted["\(index + 10)"] == text, "\(format) inserted \(index + 10)")
            }
            let updated = try #require(entries.first { $0["change"] as? String == "updated" }, "\(format)")
            let change = try #require((updated["changes"] as? [String: Any])?["text"] as? [String: String])
            #expect(change == ["old": expected[1], "new": expected[0]], "\(format)")
            #expect(updated["oldLine"] as? Int == 15 && updated["newLine"] as? Int == 14, "\(format)")
            #expect(updated["oldRow"] as? Int == 13 && updated["newRow"] as? Int == 12, "\(format)")
        }
    }

    /// Files of 64 KiB and more together are read on two threads, smaller ones on one: both
    /// give the same answer.
    @Test func smallAndLargeFilesReadTheSame() throws {
        let files = try FileFixture()
        for rows in [100, 4_000] {
            let old = "id,value\n" + (0..<rows).map { "\($0),value number \($0)\n" }.joined()
            let kept = (0..<rows).filter { $0 % 10 != 0 }
            let new = "id,value\n" + kept.map { "\($0),value number \($0 % 7 == 0 ? -$0 : $0)\n" }.joined()
                + (rows..<rows + 25).map { "\($0),new\n" }.joined()
            let oldPath = try files.write("old-\(rows).csv", old), newPath = try files.write("new-\(rows).csv", new)
            #expect((old.utf8.count + new.utf8.count >= 64 << 10) == (rows == 4_000))
            let counts = try #require(try files.keyed([oldPath, newPath, "--key", "id"])["counts"] as? [String: Int])
            #expect(counts == ["deleted": rows / 10, "inserted": 25, "updated": kept.filter { $0 % 7 == 0 && $0 > 0 }.count, "moved": 0])
        }
    }

    @Test func compositeKeysAndDuplicatePolicies() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", "a,b,v\n1,x,0\n1,y,0\n1,x,1\n")
        let new = try files.write("new.csv", "a,b,v\n1,y,0\n1,x,0\n")
        let paired = try files.diff([old, new, "--key", "a,b"]).get()
        #expect(paired.deletions == [2] && paired.moves.count == 1)
        let first = try files.diff([old, new, "--key", "a,b", "--duplicates", "first"]).get()
        #expect(first.droppedOld == [2] && first.droppedNew == [] && first.deletions.isEmpty)
        let message = try files.error([old, new, "--key", "a,b", "--duplicates", "reject"])
        #expect(message?.hasPrefix("\(old):4: duplicate key") == true)
        #expect(message?.hasSuffix("(first at line 2)") == true)
    }

    @Test func jsonLinesByValue() throws {
        let files = try FileFixture()
        let old = try files.write("old.jsonl", "{\"_id\":1,\"tags\":[\"a\"],\"n\":1}\n\n{\"_id\":2,\"ok\":true}\n")
        let new = try files.write("new.ndjson", "{\"ok\":true,\"_id\":2}\r\n{\"n\":1.0,\"tags\":[\"a\"],\"_id\":1}\n{\"_id\":2.0,\"ok\":1}\n")
        let changes = try files.diff([old, new, "--key", "_id", "--format", "jsonl"]).get()
        // 2.0 is the same key as 2: a second occurrence, inserted; true vs 1 differ.
        #expect(changes == Changeset(oldCount: 2, newCount: 3, insertions: [2], moves: [IndexPair(old: 0, new: 1)]))
    }

    @Test func badInputIsOneLineNamingFileAndLine() throws {
        let files = try FileFixture()
        let good = try files.write("good.csv", csvOld)
        let cases: [(String, [UInt8], String)] = [
            ("utf8.csv", Array("id,name\n1,ok\n2,".utf8) + [0xFF] + Array("\n".utf8), "utf8.csv:3: invalid UTF-8"),
            ("ragged.csv", Array("id,name\n1,a\n2\n".utf8), "ragged.csv:3: expected 2 fields, found 1"),
            ("quote.csv", Array("id,name\n1,a\n2,\"open\n3,b\n".utf8), "quote.csv:3: unterminated quoted field"),
            ("stray.csv", Array("id,name\n1,a\"b\n".utf8), "stray.csv:2: a quote inside an unquoted field"),
            ("nokey.csv", Array("ident,name\n1,a\n".utf8), "nokey.csv:1: no key column 'id' in the header"),
            ("twice.csv", Array("id,name,name\n1,a,b\n".utf8), "twice.csv:1: column 'name' appears twice in the header"),
            ("empty.csv", [], "empty.csv:1: empty file: expected a header line"),
            ("late.csv", Array("id,name\n1,a\n2,b\n3,\"c\nd\"\n4,".utf8) + [0xC3] + Array("\n".utf8), "late.csv:6: invalid UTF-8"),
        ]
        for (name, bytes, expected) in cases {
            let path = try files.write(name, bytes)
            #expect(try files.error([good, path, "--key", "id"]) == "\(files.folder)/\(expected)")
        }
        let goodJSON = try files.write("good.jsonl", "{\"id\":1}\n")
        let jsonCases: [(String, String, String)] = [
            ("bad.jsonl", "{\"id\":1}\n{\"id\":2}\n{\"id\":3,}\n", "bad.jsonl:3: invalid JSON at column 9: expected a member name in quotes"),
            ("array.jsonl", "{\"id\":1}\n[1]\n", "array.jsonl:2: expected a JSON object"),
            ("nokey.jsonl", "{\"id\":1}\n{\"key\":2}\n", "nokey.jsonl:2: no key 'id'"),
        ]
        for (name, text, expected) in jsonCases {
            let path = try files.write(name, text)
            #expect(try files.error([goodJSON, path, "--key", "id"]) == "\(files.folder)/\(expected)")
        }
        #expect(try files.error([good, goodJSON, "--key", "id"]) == "\(goodJSON): one file is JSON Lines and the other is not")
        #expect(try files.error([good, good, "--key", "id", "--moves", "sideways"]) == "--moves: expected minimal, displaced or none, not 'sideways'")
    }

    @Test func headerOnlyAndEmptyJSONLinesAreEmptyTables() throws {
        let files = try FileFixture()
        let header = try files.write("header.csv", "id,name\n")
        let rows = try files.write("rows.csv", "id,name\n1,a\n2,b\n")
        #expect(try files.diff([header, rows, "--key", "id"]).get() == Changeset(oldCount: 0, newCount: 2, insertions: [0, 1]))
        let empty = try files.write("empty.jsonl", "")
        let one = try files.write("one.jsonl", "{\"id\":1}\n")
        #expect(try files.diff([one, empty, "--key", "id"]).get() == Changeset(oldCount: 1, newCount: 0, deletions: [0]))
    }

    /// The process contract: exit status 2, one line on stderr, nothing on stdout.
    @Test func badInputExitsTwoWithNothingOnStdout() throws {
        let files = try FileFixture()
        let good = try files.write("good.csv", csvOld)
        let bad = try files.write("bad.csv", "id,name\n1\n")
        for arguments in [[good, bad, "--key", "id"], [good, good], [good, good, "--key", "id", "--bogus"]] {
            let (status, out, err) = try runDiffEngine(arguments)
            #expect(status == 2)
            #expect(out.isEmpty)
            #expect(err.hasPrefix("diffengine: ") && err.filter { $0 == "\n" }.count == 1)
        }
    }

    /// Keys in messages and summaries are the field texts or JSON values, on one line.
    @Test func keysArePrintedReadably() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", "a,b,v\n1,\"x\ny\",0\n2,z,0\n1,\"x\ny\",1\n")
        let message = try #require(try files.error([old, old, "--key", "a,b", "--duplicates", "reject"]))
        #expect(message == "\(old):5: duplicate key 1,\"x\\ny\" (first at line 2)") // the quoted field spans lines 2-3
        let json = try files.write("old.jsonl", "{\"id\":1}\n{\"id\":1.0}\n")
        #expect(try files.error([json, json, "--key", "id", "--duplicates", "reject"]) == "\(json):2: duplicate key 1 (first at line 1)")
        let strings = try files.write("strings.jsonl", "{\"id\":\"a\\nb\",\"n\":-0.25}\n{\"id\":\"a\\nb\",\"n\":1e30}\n")
        #expect(try files.error([strings, strings, "--key", "id,n", "--duplicates", "reject"]) == nil)
        #expect(try files.error([strings, strings, "--key", "id", "--duplicates", "reject"])
                == "\(strings):2: duplicate key \"a\\nb\" (first at line 1)")
        let new = try files.write("new.csv", "a,b,v\n2,z,0\n3,\"q,r\",0\n")
        let text = try files.text([old, new, "--key", "a,b", "--format", "summary"])
        #expect(text.contains("a=3, b=\"q,r\"") && text.contains("a=1, b=\"x\\ny\""))
        #expect(!text.contains("\u{0}"))
    }

    /// Numbers in keys print as ordinary JSON: plain digits up to six zeros either side of
    /// the point, an exponent past that; each reads back as the same value.
    @Test func keyNumbersPrintAsOrdinaryJSON() throws {
        let cases = [("1.50", "1.5"), ("-0.001", "-0.001"), ("0.000001", "0.000001"), ("1e-7", "0.0000001"), ("1e-8", "1e-8"), ("1.5e10", "1.5e10"),
                     ("123e-10", "1.23e-8"), ("1000000", "1000000"), ("1e7", "1e7"), ("-1.25E+8", "-125000000"),
                     ("-0", "0"), ("0.0e5", "0"), ("12345678901234567890", "12345678901234567890"),
                     ("[1.0,{\"b\":2e0,\"a\":\"\\u0001\"}]", "[1,{\"a\":\"\\u0001\",\"b\":2}]")]
        for (text, printed) in cases {
            let canonical = try Array(text.utf8).withUnsafeBytes { try canonicalJSON($0) }
            #expect(ReadableKey.json(canonical[...]) == printed, "\(text)")
            let again = try Array(printed.utf8).withUnsafeBytes { try canonicalJSON($0) }
            #expect(again == canonical, "\(text)")
        }
        // Two key values, and bytes that end inside the second: the first, then an ellipsis.
        let two = try Array("1".utf8).withUnsafeBytes { try canonicalJSON($0) } + Array("s\u{5}\0\0\0ab".utf8)
        #expect(ReadableKey.json(two[...]) == "1…")
    }

    /// A FIFO streams like a pipe: its writer may come after the differ opened it.
    @Test(.timeLimit(.minutes(1))) func fifoIsReadAsAStream() throws {
        let files = try FileFixture()
        let good = try files.write("good.csv", csvOld)
        let fifo = "\(files.folder)/pipe.csv"
        try #require(mkfifo(fifo, 0o600) == 0)
        let writer = Thread {
            usleep(200_000)
            let handle = FileHandle(forWritingAtPath: fifo)!
            handle.write(Data("id,name,price\n1,apple,3\n".utf8))
            try? handle.close()
        }
        writer.start()
        let changes = try files.diff([good, fifo, "--key", "id"]).get()
        #expect(changes == Changeset(oldCount: 4, newCount: 1, deletions: [1, 2, 3]))
    }

    /// A failed write of the result (a full device) is one line on stderr and exit 2.
    @Test func unwritableStdoutExitsTwo() throws {
        let files = try FileFixture()
        let good = try files.write("good.csv", csvOld)
        let (status, _, err) = try runDiffEngine([good, good, "--key", "id"], stdout: "/dev/full")
        #expect(status == 2)
        #expect(err == "diffengine: standard output: write failed: No space left on device\n")
    }

    /// Empty lines are skipped wherever they are (as pandas and Python's csv do); a long run
    /// is scanned once.
    @Test func blankLineRunsAreSkipped() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", "id\n" + String(repeating: "\n", count: 20_000) + "x\n" + String(repeating: "\r\n", count: 5_000))
        let new = try files.write("new.csv", "id\nx\n")
        let changes = try files.diff([old, new, "--key", "id"]).get()
        #expect(changes == Changeset(oldCount: 1, newCount: 1))
        #expect(try files.keyed([old, new, "--key", "id"])["counts"] as? [String: Int] == ["deleted": 0, "inserted": 0, "updated": 0, "moved": 0])
    }

    /// fuzz_json found it: a backslash followed by a combining mark (U+05BD) is one
    /// `Character`, so escaping by string replacement missed the backslash and printed a key
    /// that is not JSON. Escaping now goes scalar by scalar, for CSV quotes too.
    @Test func fuzzerDiscovered01BackslashBeforeCombiningMark() throws {
        // The id is: backslash, U+05BD, "d0", quote, U+0301 (the JSON text escapes both).
        let json = "{\"id\":\"\\\\\u{5BD}d0\\\"\u{301}\"}"
        var documents = JSONDocuments(keys: ["id"])
        let row = try documents.append(json: json)
        let printed = ReadableKey.json(documents.canonicalBytes[row.identity])
        var again = JSONDocuments(keys: ["id"])
        let reparsed = try again.append(json: "{\"id\":" + printed + "}")
        #expect(Array(again.canonicalBytes[reparsed.identity]) == Array(documents.canonicalBytes[row.identity]), "\(printed)")
        let csv = ReadableKey.csv(Array("a\"\u{301}b".utf8)[...], columns: 1)
        #expect(csv == "\"a\"\"\u{301}b\"")
    }
}

/// Runs the built `diffengine` executable (beside the tests) and returns its exit status,
/// standard output and standard error.
func runDiffEngine(_ arguments: [String], stdin: String? = nil, stdout: String? = nil) throws -> (Int32, Data, String) {
    let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("diffengine")
    guard FileManager.default.isExecutableFile(atPath: executable.path) else {
        throw InputError(file: executable.path, line: nil, message: "diffengine is not built beside the tests")
    }
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    if let stdout {
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
    } else {
        process.standardOutput = out
    }
    process.standardError = err
    if let stdin { process.standardInput = FileHandle(forReadingAtPath: stdin) }
    try process.run()
    // Read both pipes while it runs, so a large output cannot block it.
    final class Box: @unchecked Sendable { var data = Data() }
    let outBox = Box()
    let group = DispatchGroup()
    if stdout == nil {
        DispatchQueue.global().async(group: group) { outBox.data = out.fileHandleForReading.readDataToEndOfFile() }
    }
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    let outData = outBox.data
    process.waitUntilExit()
    return (process.terminationStatus, outData, String(decoding: errData, as: UTF8.self))
}

/// fuzz_csv found it: a header name holding a line break made the "appears twice" message
/// two lines. Every message is one line, whatever the input's names.
@Test func fuzzerDiscovered02MessagesStayOnOneLine() throws {
    let files = try FileFixture()
    let good = try files.write("good.csv", "id,x\n1,2\n")
    let twice = try files.write("twice.csv", "id,\"a\nb\",\"a\nb\"\n1,2,3\n")
    let message = try #require(try files.error([good, twice, "--key", "id"]))
    #expect(message == "\(twice):1: column 'a\\nb' appears twice in the header")
    #expect(try files.error([good, good, "--key", "no\nkey"]) == "\(good):1: no key column 'no\\nkey' in the header")
}
