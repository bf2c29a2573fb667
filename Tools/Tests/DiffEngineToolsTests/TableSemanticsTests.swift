import DiffEngine
import DiffEngineCommand
import DiffEngineTestSupport
import Foundation
import Testing

/// What `diffengine` promises a data engineer: tables by column name, field-level updates,
/// exit statuses like `diff`, every input form, partitions, JSON Patch.
@Suite struct TableSemanticsTests {
    let table = "id,name,price\n1,apple,3\n2,\"pear, green\",4\n3,kiwi,5\n"

    @Test func reorderedColumnsAreNoChange() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", table)
        let new = try files.write("new.csv", "price,name,id\n3,apple,1\n4,\"pear, green\",2\n5,kiwi,3\n")
        let result = try files.run([old, new, "--key", "id", "--format", "indexes"]).get()
        #expect(!result.differs)
        #expect(try files.diff([old, new, "--key", "id"]).get() == Changeset(oldCount: 3, newCount: 3))
    }

    @Test func renamedColumnIsRemovedPlusAddedOrARename() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", table)
        let new = try files.write("new.csv", "id,title,price\n1,apple,3\n2,\"pear, green\",4\n3,kiwi,5\n")
        let plain = try files.keyed([old, new, "--key", "id"])
        let columns = try #require(plain["columns"] as? [String: Any])
        #expect(columns["added"] as? [String] == ["title"] && columns["removed"] as? [String] == ["name"])
        #expect(plain["counts"] as? [String: Int] == ["deleted": 0, "inserted": 0, "updated": 0, "moved": 0])
        #expect(try files.run([old, new, "--key", "id"]).get().differs, "a column change is a difference")

        let renamed = try files.keyed([old, new, "--key", "id", "--rename", "name=title"])
        let renamedColumns = try #require(renamed["columns"] as? [String: Any])
        #expect(renamedColumns["added"] as? [String] == [] && renamedColumns["removed"] as? [String] == [])
        #expect(renamedColumns["renamed"] as? [[String: String]] == [["old": "name", "new": "title"]])
        // The renamed column is compared: a changed value under it is an update.
        let changed = try files.write("changed.csv", "id,title,price\n1,apple,3\n2,pear,4\n3,kiwi,5\n")
        let update = try files.keyed([old, changed, "--key", "id", "--rename", "name=title"])
        let updated = try #require(update["updated"] as? [[String: Any]])
        #expect(updated.count == 1)
        #expect(updated.first?["changes"] as? [String: [String: String]] == ["title": ["old": "pear, green", "new": "pear"]])
        #expect(try files.error([old, new, "--key", "id", "--rename", "nope=title"]) == "\(old):1: no column 'nope' to rename")
    }

    @Test func addedColumnUpdatesRowsOnlyWhenAsked() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", table)
        let new = try files.write("new.csv", "id,name,price,stock\n1,apple,3,10\n2,\"pear, green\",4,\n3,kiwi,5,0\n")
        let quiet = try files.keyed([old, new, "--key", "id"])
        #expect((quiet["columns"] as? [String: Any])?["added"] as? [String] == ["stock"])
        #expect((quiet["updated"] as? [Any])?.count == 0)
        let strict = try files.keyed([old, new, "--key", "id", "--column-changes-update-rows"])
        let updated = try #require(strict["updated"] as? [[String: Any]])
        #expect(updated.count == 3)
        #expect(updated.first?["changes"] as? [String: [String: String]] == ["stock": ["new": "10"]])
        // An empty value and an absent column differ.
        #expect((updated[1]["changes"] as? [String: [String: String]]) == ["stock": ["new": ""]])
    }

    @Test func updatesListChangedFieldsWithOldAndNewValues() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", table)
        let new = try files.write("new.csv", "id,name,price\n1,apple,3\n2,\"pear\nred\",9\n3,kiwi,5\n")
        let keyed = try files.keyed([old, new, "--key", "id"])
        let updated = try #require((keyed["updated"] as? [[String: Any]])?.first)
        #expect(updated["key"] as? [String: String] == ["id": "2"])
        #expect(updated["oldLine"] as? Int == 3 && updated["newLine"] as? Int == 3 && updated["newRow"] as? Int == 1)
        #expect(updated["changes"] as? [String: [String: String]]
                == ["name": ["old": "pear, green", "new": "pear\nred"], "price": ["old": "4", "new": "9"]])
        // --ignore and --only leave columns out.
        #expect(try files.diff([old, new, "--key", "id", "--ignore", "name,price"]).get() == Changeset(oldCount: 3, newCount: 3))
        let onlyPrice = try files.keyed([old, new, "--key", "id", "--only", "price"])
        #expect((onlyPrice["updated"] as? [[String: Any]])?.first?["changes"] as? [String: [String: String]] == ["price": ["old": "4", "new": "9"]])
        #expect(try files.error([old, new, "--key", "id", "--ignore", "colour"]) == "--ignore: no column 'colour' in either file")
        // The summary says the same for people.
        let summary = try files.text([old, new, "--key", "id"])
        #expect(summary.contains("id=2 (line 3 -> 3): name: \"pear, green\" -> \"pear\\nred\"; price: \"4\" -> \"9\""))
        // JSON Lines: one change a line.
        let lines = try files.text([old, new, "--key", "id", "--format", "jsonl"]).split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("{\"change\":\"updated\",\"key\":{\"id\":\"2\"}"))
    }

    @Test func byteOrderMarkTSVAndDelimiters() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", [0xEF, 0xBB, 0xBF] + Array(table.utf8))
        let tsv = try files.write("new.tsv", "id\tname\tprice\n1\tapple\t3\n2\tpear, green\t4\n3\tkiwi\t6\n")
        let changes = try files.diff([old, tsv, "--key", "id"]).get()
        #expect(changes == Changeset(oldCount: 3, newCount: 3, updates: [IndexPair(old: 2, new: 2)]))
        let semicolons = try files.write("new.txt", "id;name;price\n1;apple;3\n2;pear, green;4\n3;kiwi;5\n")
        let plain = try files.write("old.txt", table)
        #expect(try files.error([plain, semicolons, "--key", "id"])?.contains("cannot tell the format") == true)
        let tsvText = try files.write("same.txt", "id\tname\tprice\n1\tapple\t3\n2\tpear, green\t4\n3\tkiwi\t5\n")
        #expect(try files.diff([tsvText, tsvText, "--key", "id", "--input", "tsv"]).get() == Changeset(oldCount: 3, newCount: 3))
        #expect(try files.text([tsvText, tsvText, "--key", "id", "--format", "tsv"]).contains("0 deleted, 0 inserted, 0 updated, 0 moved"))
        let both = try files.write("semi.csv", "id;name;price\n1;apple;3\n2;pear, green;4\n3;kiwi;5\n")
        let semiOld = try files.write("semiold.csv", "id;name;price\n1;apple;3\n2;\"pear, green\";4\n3;kiwi;5\n")
        #expect(try files.diff([semiOld, both, "--key", "id", "--delimiter", ";"]).get() == Changeset(oldCount: 3, newCount: 3))
    }

    /// Exit statuses as `diff`, standard input as `-`, `--version`: the built program.
    @Test func exitStatusesStandardInputAndVersion() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", table)
        let same = try files.write("same.csv", table)
        let new = try files.write("new.csv", table + "4,fig,6\n")
        #expect(try runDiffEngine([old, same, "--key", "id"]).0 == 0)
        let (status, out, _) = try runDiffEngine([old, "-", "--key", "id", "--format", "indexes"], stdin: new)
        #expect(status == 1)
        #expect(try JSONDecoder().decode(Changeset.self, from: out) == Changeset(oldCount: 3, newCount: 4, insertions: [3]))
        #expect(try runDiffEngine([old, "missing.csv", "--key", "id"]).0 == 2)
        let (versionStatus, version, _) = try runDiffEngine(["--version"])
        #expect(versionStatus == 0 && String(decoding: version, as: UTF8.self) == diffEngineVersion + "\n")
    }

    @Test func keyMissingOnOneSideNamesThatFile() throws {
        let files = try FileFixture()
        let old = try files.write("old.csv", table)
        let new = try files.write("new.csv", "ident,name,price\n1,apple,3\n")
        #expect(try files.error([old, new, "--key", "id"]) == "\(new):1: no key column 'id' in the header")
        #expect(try files.error([new, old, "--key", "id"]) == "\(new):1: no key column 'id' in the header")
    }

    /// A shuffled copy with some rows changed: unordered, only the real changes are left.
    @Test func ignoreOrderReportsOnlyRealChanges() throws {
        var generator = SeededGenerator(seed: 0x5E7)
        let rows = (0..<2_000).map { "\($0),name \($0),\($0 % 7)" }
        var shuffled = rows.shuffled(using: &generator)
        shuffled.removeLast(50)
        shuffled += (2_000..<2_040).map { "\($0),new,1" }
        shuffled[10] = shuffled[10] + "0"
        let files = try FileFixture()
        let old = try files.write("old.csv", "id,name,n\n" + rows.joined(separator: "\n") + "\n")
        let new = try files.write("new.csv", "id,name,n\n" + shuffled.joined(separator: "\n") + "\n")
        let keyed = try files.keyed([old, new, "--key", "id", "--ignore-order"])
        #expect(keyed["counts"] as? [String: Int] == ["deleted": 50, "inserted": 40, "updated": 1, "moved": 0])
    }

    /// N processes, one partition each: together they say what one whole run says.
    @Test(arguments: [1, 2, 7]) func partitionsUnionToTheWholeDiff(count: Int) throws {
        var generator = SeededGenerator(seed: 0x9A27 + UInt64(count))
        let old = (0..<3_000).map { "\($0 * 7 % 3_001),v\(Int.random(in: 0..<3, using: &generator))" }
        var new = old.filter { _ in Int.random(in: 0..<10, using: &generator) > 0 }.shuffled(using: &generator)
        new += (0..<200).map { "\(5_000 + $0),v0" }
        new += ["7,v9", "7,v9"] // a repeated key
        let files = try FileFixture()
        let oldPath = try files.write("old.csv", "id,v\n" + old.joined(separator: "\n") + "\n")
        let newPath = try files.write("new.csv", "id,v\n" + new.joined(separator: "\n") + "\n")
        func entries(_ arguments: [String]) throws -> Set<String> {
            let lines = try files.text(arguments + ["--format", "jsonl"]).split(separator: "\n").map(String.init)
            return Set(lines)
        }
        let whole = try entries([oldPath, newPath, "--key", "id", "--ignore-order"])
        var union = Set<String>()
        var total = 0
        for index in 0..<count {
            let part = try entries([oldPath, newPath, "--key", "id", "--partition", "\(index)/\(count)"])
            total += part.count
            union.formUnion(part)
        }
        #expect(whole.count > 400)
        #expect(total == union.count, "partitions overlap")
        #expect(union == whole)
        // The index form speaks of the files' rows, so it unions too.
        var deletions: [Int] = []
        for index in 0..<count {
            deletions += try files.diff([oldPath, newPath, "--key", "id", "--partition", "\(index)/\(count)"]).get().deletions
        }
        let wholeDeletions = try files.diff([oldPath, newPath, "--key", "id", "--ignore-order"]).get().deletions
        #expect(deletions.sorted() == wholeDeletions)
    }

    /// `--unchanged --whole-rows` accounts for every row: each kept row is deleted,
    /// inserted, or in exactly one updated or unchanged pair, and the pairs are the k-th
    /// occurrences of their key, as a naive pairing says.
    @Test(arguments: [["--ignore-order"], ["--moves", "minimal"], ["--moves", "none"]])
    func unchangedPairsCompleteThePairing(mode: [String]) throws {
        var generator = SeededGenerator(seed: 0x0C4A + UInt64(mode.count))
        func row(_ generator: inout SeededGenerator) -> (id: Int, value: Int) {
            (Int.random(in: 0..<60, using: &generator), Int.random(in: 0..<3, using: &generator))
        }
        let old = (0..<400).map { _ in row(&generator) } // ids repeat: about 7 rows a key
        var new: [(id: Int, value: Int)] = old.filter { _ in Int.random(in: 0..<8, using: &generator) > 0 }
            .map { Int.random(in: 0..<6, using: &generator) == 0 ? (id: $0.id, value: $0.value + 10) : $0 }
        new += (0..<40).map { _ in row(&generator) }
        new.shuffle(using: &generator)
        let files = try FileFixture()
        for format in ["csv", "jsonl"] {
            func text(_ rows: [(id: Int, value: Int)]) -> String {
                format == "csv" ? "id,v,line\n" + rows.enumerated().map { "\($1.id),\($1.value),\($0)" }.joined(separator: "\n") + "\n"
                    : rows.enumerated().map { "{\"id\":\($1.id),\"v\":\($1.value),\"line\":\($0)}" }.joined(separator: "\n") + "\n"
            }
            let oldPath = try files.write("old.\(format)", text(old)), newPath = try files.write("new.\(format)", text(new))
            let output = try files.text([oldPath, newPath, "--key", "id", "--ignore", "line", "--format", "jsonl",
                                         "--unchanged", "--whole-rows"] + mode)
            var oldSeen = Set<Int>(), newSeen = Set<Int>()
            var pairs: [(old: Int, new: Int)] = []
            for text in output.split(separator: "\n") {
                let entry = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
                func insert(_ row: Any?, into seen: inout Set<Int>) throws {
                    let row = try #require(row as? Int)
                    #expect(seen.insert(row).inserted, "row \(row) listed twice")
                }
                func lineNumber(_ values: Any?) -> Int? {
                    guard let values = values as? [String: Any] else { return nil }
                    return (values["line"] as? Int) ?? (values["line"] as? String).flatMap { Int($0) }
                }
                switch entry["change"] as? String {
                case "deleted": try insert(entry["row"], into: &oldSeen)
                case "inserted": try insert(entry["row"], into: &newSeen)
                case "updated", "unchanged":
                    try insert(entry["oldRow"], into: &oldSeen)
                    try insert(entry["newRow"], into: &newSeen)
                    let pair = (old: entry["oldRow"] as! Int, new: entry["newRow"] as! Int)
                    #expect(lineNumber(entry["oldValues"]) == pair.old && lineNumber(entry["newValues"]) == pair.new, "whole rows are the pair's")
                    #expect((old[pair.old].value == new[pair.new].value) == (entry["change"] as? String == "unchanged"))
                    pairs.append(pair)
                default: break // moved rows are also in a pair
                }
            }
            #expect(oldSeen == Set(old.indices) && newSeen == Set(new.indices), "every row accounted for (\(format), \(mode))")
            // The naive pairing: the k-th old row of a key with the k-th new row of that key.
            var naive: [Int: (old: [Int], new: [Int])] = [:]
            for (index, row) in old.enumerated() { naive[row.id, default: ([], [])].old.append(index) }
            for (index, row) in new.enumerated() { naive[row.id, default: ([], [])].new.append(index) }
            let expected = naive.values.flatMap { zip($0.old, $0.new).map { "\($0)-\($1)" } }
            if mode != ["--moves", "none"] {
                #expect(Set(pairs.map { "\($0.old)-\($0.new)" }) == Set(expected), "\(format), \(mode)")
            } else {
                #expect(Set(pairs.map { "\($0.old)-\($0.new)" }).isSubset(of: Set(expected)), "\(format), \(mode)")
            }
        }
    }

    /// The JSON Patch applied to the old file's objects gives the new file's.
    @Test(arguments: [UInt64(1), 2, 3, 4]) func jsonPatchRebuildsTheNewDocuments(seed: UInt64) throws {
        var generator = SeededGenerator(seed: 0x7A7C + seed)
        func document(_ id: Int, _ generator: inout SeededGenerator) -> [String: Any] {
            var object: [String: Any] = ["id": id, "n": Int.random(in: 0..<4, using: &generator)]
            if Bool.random(using: &generator) { object["tag"] = ["a", "b~/c"][Int.random(in: 0..<2, using: &generator)] }
            if Int.random(in: 0..<4, using: &generator) == 0 { object["nested"] = ["x": [1, 2]] }
            return object
        }
        let old = (0..<300).map { document($0, &generator) }
        var new: [[String: Any]] = []
        for object in old where Int.random(in: 0..<8, using: &generator) > 0 {
            new.append(Int.random(in: 0..<5, using: &generator) == 0 ? document(object["id"] as! Int, &generator) : object)
        }
        for step in 0..<30 { new.insert(document(1_000 + step, &generator), at: Int.random(in: 0...new.count, using: &generator)) }
        for _ in 0..<15 {
            let from = Int.random(in: 0..<new.count, using: &generator)
            new.insert(new.remove(at: from), at: Int.random(in: 0..<new.count, using: &generator))
        }
        func lines(_ objects: [[String: Any]]) throws -> String {
            try objects.map { String(decoding: try JSONSerialization.data(withJSONObject: $0, options: [.sortedKeys]), as: UTF8.self) }
                .joined(separator: "\n") + "\n"
        }
        let files = try FileFixture()
        let oldPath = try files.write("old.jsonl", try lines(old))
        let newPath = try files.write("new.jsonl", try lines(new))
        let patch = try files.run([oldPath, newPath, "--key", "id", "--format", "patch"]).get().bytes
        let operations = try #require(try JSONSerialization.jsonObject(with: Data(patch)) as? [[String: Any]])
        var documents: [Any] = old
        try applyJSONPatch(operations, to: &documents)
        let expected = try JSONSerialization.data(withJSONObject: new, options: [.sortedKeys])
        #expect(try JSONSerialization.data(withJSONObject: documents, options: [.sortedKeys]) == expected)
        #expect(operations.contains { $0["op"] as? String == "replace" }, "updated items are patched member by member")
    }
}

/// A small RFC 6902 applier for the test (add, remove, replace on arrays and objects).
func applyJSONPatch(_ operations: [[String: Any]], to root: inout [Any]) throws {
    struct PatchError: Error { var message: String }
    for operation in operations {
        guard let op = operation["op"] as? String, let path = operation["path"] as? String else { throw PatchError(message: "bad op") }
        let tokens = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
            .map { $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~") }
        guard let index = Int(tokens[0]) else { throw PatchError(message: "bad index \(path)") }
        if tokens.count == 1 {
            switch op {
            case "add": root.insert(operation["value"]!, at: index)
            case "remove": root.remove(at: index)
            case "replace": root[index] = operation["value"]!
            default: throw PatchError(message: op)
            }
            continue
        }
        guard tokens.count == 2, var object = root[index] as? [String: Any] else { throw PatchError(message: "bad path \(path)") }
        switch op {
        case "add", "replace": object[tokens[1]] = operation["value"]!
        case "remove":
            guard object.removeValue(forKey: tokens[1]) != nil else { throw PatchError(message: "nothing at \(path)") }
        default: throw PatchError(message: op)
        }
        root[index] = object
    }
}
