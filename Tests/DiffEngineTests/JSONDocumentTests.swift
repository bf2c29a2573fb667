import DiffEngine
import DiffEngineTestSupport
import Testing

func canonical(_ text: String) throws -> [UInt8] {
    var copy = text
    return try copy.withUTF8 { try canonicalJSON(UnsafeRawBufferPointer($0)) }
}

@Suite struct JSONDocumentTests {
    @Test(arguments: [
        (#"{"a":1,"b":[true,null]}"#, #"{ "b" : [ true , null ] , "a" : 1 }"#),
        ("1", "1.0"), ("1", "10e-1"), ("1.5e2", "150"), ("0", "-0.0e5"), ("-2.50", "-25e-1"),
        ("12345678901234567890123", "1.2345678901234567890123e22"),
        (#""\u00e9""#, "\"\u{e9}\""), (#""\ud83d\ude00""#, "\"😀\""), (#""a\/b""#, #""a/b""#),
        (#"{"k":1,"k":2}"#, #"{"k":2}"#), // repeated keys: the last wins
    ])
    func equalByValue(_ lhs: String, _ rhs: String) throws {
        #expect(try canonical(lhs) == canonical(rhs))
    }

    @Test(arguments: [
        ("1", "true"), ("0", "false"), ("null", "0"), ("1", "\"1\""), ("[1,2]", "[2,1]"),
        ("12345678901234567890123", "12345678901234567890124"), // no rounding through Double
        ("\"\u{e9}\"", "\"e\u{301}\""), // no Unicode normalization
        (#"{"a":{"b":1}}"#, #"{"a":{"b":"1"}}"#), ("{}", "[]"), (#""""#, "null"),
    ])
    func differentByValue(_ lhs: String, _ rhs: String) throws {
        #expect(try canonical(lhs) != canonical(rhs))
    }

    @Test(arguments: [
        "", "{", #"{"a"}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "1e", "-", "tru", #""abc"#,
        #""\x""#, #""\ud800""#, #""\udc00x""#, "\"a\tb\"", "1 2", #"{"a":1}x"#, "NaN",
    ])
    func syntaxErrors(_ text: String) {
        #expect(throws: JSONSyntaxError.self) { try canonical(text) }
    }

    @Test func documentsDiffByIdentityAndValue() throws {
        var documents = JSONDocuments(keys: ["_id"])
        let before = [#"{"_id":1,"color":"blue","n":1}"#, #"{"_id":2,"color":"red"}"#, #"{"_id":3,"color":"blue"}"#]
        let after = [#"{"color":"blue","_id":3}"#, #"{"n":1.0,"_id":1,"color":"blue"}"#, #"{"_id":4}"#, #"{"_id":2,"color":"green"}"#]
        let old = try before.map { try documents.append(json: $0) }
        let new = try after.map { try documents.append(json: $0) }
        let changes = try diff(old, new, using: documents.adapter)
        // 1 and 3 are unchanged by value (member order and 1 vs 1.0 do not matter);
        // 2 changed colour; 4 is new; 3 moved ahead of 1.
        #expect(changes.insertions == [2])
        #expect(changes.deletions.isEmpty)
        #expect(changes.updates == [IndexPair(old: 1, new: 3)])
        #expect(changes.moves.count == 1)
        let adapter = documents.adapter
        #expect(checkChangeset(changes, old: old, new: new, mode: .minimal,
                               sameIdentity: adapter.identitiesEqual, sameContent: adapter.contentsEqual).isEmpty)
    }

    @Test func compositeKeysAndDocumentErrors() throws {
        var documents = JSONDocuments(keys: ["tenant", "id"])
        let a = try documents.append(json: #"{"tenant":"x","id":1}"#)
        let b = try documents.append(json: #"{"id":1,"tenant":"y"}"#)
        let c = try documents.append(json: #"{"id":1.0,"tenant":"x","extra":[]}"#)
        let adapter = documents.adapter
        #expect(!adapter.identitiesEqual(a, b) && adapter.identitiesEqual(a, c) && !adapter.contentsEqual(a, c))
        #expect(throws: JSONDocumentError.missingKey("tenant")) { try documents.append(json: #"{"id":2}"#) }
        #expect(throws: JSONDocumentError.notAnObject) { try documents.append(json: "[1]") }
        #expect(throws: JSONDocumentError.self) { try documents.append(json: #"{"id":"#) }
        #expect(documents.adapter.bytes == adapter.bytes) // failed appends leave nothing behind
    }

    @Test func utf8Validation() {
        func check(_ bytes: [UInt8]) -> Int? { bytes.withUnsafeBytes { firstInvalidUTF8Byte(in: $0) } }
        #expect(check(Array("plain ascii, long enough to use the word loop".utf8)) == nil)
        #expect(check(Array("héllo 😀 €".utf8)) == nil)
        #expect(check([0x61, 0x62, 0xFF]) == 2)
        #expect(check(Array("abcdefgh".utf8) + [0xC0, 0xAF]) == 8) // overlong '/'
        #expect(check([0xED, 0xA0, 0x80]) == 0) // a surrogate
        #expect(check([0xF4, 0x90, 0x80, 0x80]) == 0) // above U+10FFFF
        #expect(check([0x61, 0xE2, 0x82]) == 1) // cut short
    }
}
