import CDiffCore
import CDiffCore.Testing
import Testing

/// The C core rejects bad sizes, buffers and call orders with a status, never a write out
/// of bounds (DiffEngine.docc/BadAndHostileInput.md).
@Suite struct CoreStatusTests {
    /// Runs a diff of old → new keys and returns the workspace for further calls.
    func withFinishedDiff(_ old: [UInt64], _ new: [UInt64], _ body: (UnsafeMutableRawPointer, dc_counts_t) -> Void) {
        let size = dc_diff_workspace_size(old.count, new.count)
        let workspace = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { workspace.deallocate() }
        var counts = dc_counts_t()
        old.withUnsafeBufferPointer { oldKeys in
            new.withUnsafeBufferPointer { newKeys in
                var input = dc_diff_input_t()
                input.match.old_keys = oldKeys.baseAddress
                input.match.old_count = oldKeys.count
                input.match.new_keys = newKeys.baseAddress
                input.match.new_count = newKeys.count
                #expect(dc_diff(workspace, size, &input, &counts) == DC_OK)
            }
        }
        body(workspace, counts)
    }

    @Test func outputBufferOneTooSmallIsRefusedAndUntouched() {
        withFinishedDiff([1, 2, 3, 4], [9, 4, 3, 2]) { workspace, counts in
            #expect(counts.deletions == 1 && counts.insertions == 1 && counts.moves == 2)
            var storage = [Int64](repeating: -7, count: 16)
            storage.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                var out = dc_changeset_buffers_t(deletions: base, deletions_capacity: 1,
                                                 insertions: base + 1, insertions_capacity: 1,
                                                 updates: base + 2, updates_capacity: 0,
                                                 moves: base + 2, moves_capacity: 1) // needs 2
                #expect(dc_read(workspace, 0, &out) == DC_ERR_CAPACITY_TOO_SMALL)
            }
            #expect(storage.allSatisfy { $0 == -7 })
            storage.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                var out = dc_changeset_buffers_t(deletions: base, deletions_capacity: 1,
                                                 insertions: base + 1, insertions_capacity: 1,
                                                 updates: nil, updates_capacity: 0,
                                                 moves: base + 2, moves_capacity: 2)
                #expect(dc_read(workspace, 10, &out) == DC_OK)
            }
            // 1 is deleted, 9 inserted; of 2,3,4 (now reversed) 4 stays: 3 moves to 2, 2 to 3.
            #expect(Array(storage[0..<6]) == [10, 10, 12, 12, 11, 13])
            #expect(storage[6...].allSatisfy { $0 == -7 })
        }
    }

    @Test func workspaceChecks() {
        let keys: [UInt64] = [1, 2, 3]
        let size = dc_diff_workspace_size(3, 3)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size + 8, alignment: 8)
        defer { memory.deallocate() }
        withMatchInput(keys, keys) { input in
            #expect(dc_match(memory, size - 1, &input) == DC_ERR_WORKSPACE_TOO_SMALL)
            #expect(dc_match(memory + 4, size, &input) == DC_ERR_WORKSPACE_MISALIGNED)
            #expect(dc_match(nil, size, &input) == DC_ERR_NULL_POINTER)
            #expect(dc_match_weakened(memory, size, &input, 3) == DC_ERR_INVALID_ARGUMENT) // truncated keys need verifying
            #expect(dc_match_weakened(memory, size, &input, 65) == DC_ERR_INVALID_ARGUMENT)
            let newKeys = input.new_keys
            input.new_keys = nil
            #expect(dc_match(memory, size, &input) == DC_ERR_NULL_POINTER)
            input.new_keys = newKeys
            input.new_count = 100 // far more than the workspace was sized for
            #expect(dc_match(memory, size, &input) == DC_ERR_WORKSPACE_TOO_SMALL)
        }
        #expect(dc_diff_workspace_size(Int(DC_MAX_ROWS) + 1, 0) == 0)
        #expect(dc_repeats_workspace_size(Int(DC_MAX_ROWS) + 1) == 0)
    }

    /// Equal keys whose identities all differ use up a collision budget: the match stops
    /// with a status, leaves no pairing, and the workspace takes the next match.
    @Test func collisionBudgetStopsTheMatch() {
        let keys = [UInt64](repeating: 7, count: 64)
        let size = dc_diff_workspace_size(64, 64)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { memory.deallocate() }
        withMatchInput(keys, keys) { input in
            // Old row i has identity i, new row j identity 63 - j: all distinct, reversed.
            input.identity_equal = { _, aSide, a, bSide, b in
                (aSide == UInt32(DC_SIDE_OLD) ? a : 63 - a) == (bSide == UInt32(DC_SIDE_OLD) ? b : 63 - b)
            }
            input.placement_seed = 0x5eed
            input.collision_budget = 10
            #expect(dc_match(memory, size, &input) == DC_ERR_TOO_MANY_COLLISIONS)
            #expect(dc_new_to_old(memory) == nil)
            input.collision_budget = 0
            #expect(dc_match(memory, size, &input) == DC_OK)
            let pairing = UnsafeBufferPointer(start: dc_new_to_old(memory), count: 64)
            #expect(Array(pairing) == (0..<64).reversed().map(UInt32.init))
        }
        #expect(String(cString: dc_status_message(DC_ERR_TOO_MANY_COLLISIONS)).contains("share"))
    }

    /// Pass 2 as one bitmap: rows flagged are paired ones, read back in one call; a bit for
    /// an unpaired row or a bitmap of the wrong length is refused and flags nothing.
    @Test func updatesAsOneBitmap() {
        let old: [UInt64] = [1, 2, 3], new: [UInt64] = [3, 9, 1]
        let size = dc_diff_workspace_size(3, 3)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { memory.deallocate() }
        withMatchInput(old, new) { input in #expect(dc_match(memory, size, &input) == DC_OK) }
        var unpaired: [UInt64] = [0b010] // new row 1 (key 9) has no partner
        #expect(dc_mark_updated_rows(memory, &unpaired, 1) == DC_ERR_INVALID_ARGUMENT)
        var tooLong: [UInt64] = [0b001, 0]
        #expect(dc_mark_updated_rows(memory, &tooLong, 2) == DC_ERR_INVALID_ARGUMENT)
        #expect(dc_updated_rows(memory)?.pointee == 0)
        var paired: [UInt64] = [0b101]
        #expect(dc_mark_updated_rows(memory, &paired, 1) == DC_OK)
        #expect(dc_updated_rows(memory)?.pointee == 0b101)
        #expect(dc_is_updated(memory, 0) && !dc_is_updated(memory, 1) && dc_is_updated(memory, 2))
    }

    /// The exposed LIS: its tie rule (in `1 0`, the later value stays, as `AB -> BA` moves A)
    /// and its status codes.
    @Test func longestIncreasingSubsequence() {
        let values: [UInt32] = [3, 0, 1, 4, 2, 5]
        let size = dc_lis_workspace_size(values.count)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size + 8, alignment: 8)
        defer { memory.deallocate() }
        var keeps = [UInt8](repeating: 9, count: values.count)
        var kept = 0
        #expect(dc_longest_increasing(values, values.count, memory, size, &keeps, &kept) == DC_OK)
        #expect(kept == 4 && keeps == [0, 1, 1, 0, 1, 1]) // 0 1 2 5: the latest value of each level
        #expect(dc_longest_increasing([1, 0], 2, memory, size, &keeps, &kept) == DC_OK)
        #expect(kept == 1 && Array(keeps.prefix(2)) == [0, 1])
        #expect(dc_longest_increasing(values, values.count, memory, size - 1, &keeps, &kept) == DC_ERR_WORKSPACE_TOO_SMALL)
        #expect(dc_longest_increasing(values, values.count, memory + 4, size, &keeps, &kept) == DC_ERR_WORKSPACE_MISALIGNED)
        #expect(dc_longest_increasing(values, values.count, memory, size, nil, &kept) == DC_ERR_NULL_POINTER)
        #expect(dc_longest_increasing(nil, 0, nil, 0, nil, &kept) == DC_OK && kept == 0)
        #expect(dc_lis_workspace_size(Int(DC_MAX_ROWS) + 1) == 0)
    }

    @Test func passesOutOfOrderAreRefused() {
        let size = dc_diff_workspace_size(1, 1)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { memory.deallocate() }
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        var counts = dc_counts_t()
        var out = dc_changeset_buffers_t()
        #expect(dc_finish(memory, DC_MOVES_MINIMAL, &counts) == DC_ERR_WRONG_STATE)
        #expect(dc_read(memory, 0, &out) == DC_ERR_WRONG_STATE)
        #expect(dc_new_to_old(memory) == nil)
        withFinishedDiff([5], [6]) { workspace, _ in
            #expect(dc_mark_updated(workspace, 0) == DC_ERR_WRONG_STATE) // already finished
            #expect(dc_finish(workspace, DC_MOVES_MINIMAL, &counts) == DC_ERR_WRONG_STATE)
        }
        withMatchInput([5], [5]) { input in
            #expect(dc_match(memory, size, &input) == DC_OK)
            #expect(dc_mark_updated(memory, 1) == DC_ERR_INVALID_ARGUMENT) // out of range
            #expect(dc_finish(memory, dc_move_mode_t(rawValue: 9), &counts) == DC_ERR_INVALID_ARGUMENT)
        }
    }

    /// `dc_match_carried` over integer fields: bad layouts and inputs are refused; the new
    /// keys are written whether or not the set can carry the diff (past the rows kept in
    /// place, whose keys are the old ones); updates are marked where contents differ.
    @Test func carriedFieldsRefuseBadLayoutsAndAlwaysWriteKeys() {
        // Rows of (id, content), 16 bytes each.
        let old: [UInt64] = [1, 0, 2, 0, 3, 0], moved: [UInt64] = [3, 0, 1, 5, 2, 0]
        let oldKeys: [UInt64] = [1, 2, 3]
        func run(setKeys: [UInt64], new: [UInt64]? = nil, stride: Int = 16, identityOffset: Int = 0, contentOffsets: [Int] = [8],
                 change: (inout dc_carried_input_t) -> Void = { _ in },
                 _ check: (dc_status_t, dc_carried_result_t, [UInt64], UnsafeMutableRawPointer) -> Void) {
            let setSize = dc_key_set_size(setKeys.count), size = dc_diff_workspace_size(3, 3)
            let set = UnsafeMutableRawPointer.allocate(byteCount: setSize, alignment: 8)
            let workspace = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            defer { set.deallocate(); workspace.deallocate() }
            var distinct = false
            #expect(dc_key_set_build(set, setSize, setKeys, setKeys.count, 42, &distinct) == DC_OK)
            // An earlier diff in the workspace, which the call must discard whatever it returns.
            withMatchInput(oldKeys, oldKeys) { input in #expect(dc_match(workspace, size, &input) == DC_OK) }
            #expect(dc_new_to_old(workspace) != nil)
            var written = [UInt64](repeating: 99, count: 3)
            var result = dc_carried_result_t()
            let status = old.withUnsafeBytes { oldRows in
                (new ?? moved).withUnsafeBytes { newRows in
                    contentOffsets.withUnsafeBufferPointer { offsets in
                        oldKeys.withUnsafeBufferPointer { oldKeys in
                            written.withUnsafeMutableBufferPointer { written in
                                var input = dc_carried_input_t()
                                input.old_keys = oldKeys.baseAddress
                                input.old_count = 3
                                input.new_keys = written.baseAddress
                                input.new_count = 3
                                input.rows = DC_ROWS_FIELDS
                                input.old_rows = oldRows.baseAddress
                                input.new_rows = newRows.baseAddress
                                input.stride = stride
                                input.identity_offset = identityOffset
                                input.content_offsets = offsets.baseAddress
                                input.content_count = offsets.count
                                change(&input)
                                return dc_match_carried(workspace, size, &input, set, &result)
                            }
                        }
                    }
                }
            }
            check(status, result, written, workspace)
        }
        run(setKeys: oldKeys) { status, result, written, workspace in
            #expect(status == DC_OK && result.matched && result.kept_keys == 0)
            #expect(written == [3, 1, 2])
            #expect(Array(UnsafeBufferPointer(start: dc_new_to_old(workspace), count: 3)) == [2, 0, 1])
            #expect((0..<3).map { dc_is_updated(workspace, $0) } == [false, true, false])
        }
        // Rows that kept their places pair in place and keep their keys (the caller need not
        // read them from `written`).
        run(setKeys: oldKeys, new: [1, 0, 2, 7, 3, 0]) { status, result, _, workspace in
            #expect(status == DC_OK && result.matched && result.kept_keys == 3)
            #expect((0..<3).map { dc_is_updated(workspace, $0) } == [false, true, false])
        }
        // Until the pairing is asked for per row, it is held a segment at a time: the passes
        // after it (marking updates, moves, the read-out) work from the segments.
        run(setKeys: oldKeys) { status, result, written, workspace in
            #expect(status == DC_OK && result.matched)
            #expect(dc_mark_updated(workspace, 2) == DC_OK)
            var counts = dc_counts_t()
            #expect(dc_finish(workspace, DC_MOVES_MINIMAL, &counts) == DC_OK)
            #expect(counts.paired == 3 && counts.deletions == 0 && counts.insertions == 0 && counts.updates == 2 && counts.moves == 1)
            var storage = [Int64](repeating: -7, count: 6)
            storage.withUnsafeMutableBufferPointer { buffer in
                let base = buffer.baseAddress!
                var out = dc_changeset_buffers_t(deletions: nil, deletions_capacity: 0, insertions: nil, insertions_capacity: 0,
                                                 updates: base, updates_capacity: 2, moves: base + 4, moves_capacity: 1)
                #expect(dc_read(workspace, 0, &out) == DC_OK)
            }
            // (old, new) pairs: 1 and 2 updated; 3 moved to the front, 1 and 2 staying in order.
            #expect(storage == [0, 1, 1, 2, 2, 0])
            #expect(Array(UnsafeBufferPointer(start: dc_new_to_old(workspace), count: 3)) == [2, 0, 1])
        }
        // A set of repeated keys cannot carry the diff: nothing paired (the earlier diff gone),
        // the keys still written.
        for new in [moved, [1, 0, 2, 7, 3, 0]] {
            run(setKeys: [1, 1, 3], new: new) { status, result, written, workspace in
                #expect(status == DC_OK && !result.matched && result.kept_keys == 0)
                #expect(written == [new[0], new[2], new[4]])
                #expect(dc_new_to_old(workspace) == nil)
            }
        }
        for (stride, identityOffset, contentOffsets) in [(16, 9, [8]), (16, 0, [12]), (4, 0, [Int]())] {
            run(setKeys: oldKeys, stride: stride, identityOffset: identityOffset, contentOffsets: contentOffsets) { status, result, _, _ in
                #expect(status == DC_ERR_INVALID_ARGUMENT && !result.matched, "stride \(stride), offsets \(identityOffset) \(contentOffsets)")
            }
        }
        // Fields read their keys and are exact: no reader, no verifier, no caller's prefix; a
        // prefix longer than a side, and a kind of rows the core does not know, are refused.
        let refused: [(String, (inout dc_carried_input_t) -> Void)] = [
            ("a key reader", { $0.read_keys = { _, _, _ in } }),
            ("a verifier", { $0.identity_equal = { _, _, _, _, _ in true } }),
            ("a caller's prefix", { $0.equal_prefix = 1 }),
            ("a prefix past the rows", { $0.rows = DC_ROWS_NONE; $0.equal_prefix = 4 }),
            ("an unknown kind of rows", { $0.rows = dc_rows_kind_t(rawValue: 7) }),
            ("rows as bytes without a reader", { $0.rows = DC_ROWS_BYTES }),
        ]
        for (name, change) in refused {
            run(setKeys: oldKeys, change: change) { status, result, _, _ in
                #expect(status != DC_OK && !result.matched, "\(name)")
            }
        }
        var result = dc_carried_result_t()
        var input = dc_carried_input_t()
        #expect(dc_match_carried(nil, 0, &input, nil, &result) == DC_ERR_NULL_POINTER)
        #expect(dc_match_carried(nil, 0, nil, nil, &result) == DC_ERR_NULL_POINTER)
    }

    @Test func badRowOffsetsAreRefused() {
        let bytes: [UInt8] = Array("abcdef".utf8)
        var hashes = [UInt64](repeating: 0, count: 2)
        let decreasing: [UInt64] = [0, 4, 2]
        let pastTheEnd: [UInt64] = [0, 3, 7]
        let good: [UInt64] = [0, 3, 6]
        bytes.withUnsafeBufferPointer { byteBuffer in
            #expect(dc_hash_rows(byteBuffer.baseAddress, 6, decreasing, 2, &hashes) == DC_ERR_INVALID_ARGUMENT)
            #expect(dc_hash_rows(byteBuffer.baseAddress, 6, pastTheEnd, 2, &hashes) == DC_ERR_INVALID_ARGUMENT)
            #expect(hashes == [0, 0])
            #expect(dc_hash_rows(byteBuffer.baseAddress, 6, good, 2, &hashes) == DC_OK)
            var spans = [dc_span_t(offset: 4, length: 3)]
            #expect(dc_hash_spans(byteBuffer.baseAddress, 6, &spans, 1, &hashes) == DC_ERR_INVALID_ARGUMENT)
        }
        #expect(hashes[0] == dc_hash_bytes("abc", 3) && hashes[1] == dc_hash_bytes("def", 3))
        var fixed = [UInt64](repeating: 0, count: 1)
        #expect(dc_hash_u64([42], 1, &fixed) == DC_OK)
        #expect(fixed[0] == 0xdc24_52fd_5c51_e693) // xxhash.xxh3_64_intdigest(struct.pack('<Q', 42), seed)
    }
}

/// Calls `body` with a match input over `old` and `new` (every other field zero); the key
/// pointers are valid only inside `body`.
func withMatchInput(_ old: [UInt64], _ new: [UInt64], _ body: (inout dc_match_input_t) -> Void) {
    old.withUnsafeBufferPointer { oldBuffer in
        new.withUnsafeBufferPointer { newBuffer in
            var input = dc_match_input_t()
            input.old_keys = oldBuffer.baseAddress
            input.old_count = old.count
            input.new_keys = newBuffer.baseAddress
            input.new_count = new.count
            body(&input)
        }
    }
}
