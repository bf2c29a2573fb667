import DiffEngine
import DiffEngineTestSupport
import Testing

@Suite struct LiveFeedTests {
    typealias Feed = LiveFeed<IdentifiableAdapter<TestRow>, Int>

    /// Snapshots from the random scenarios (repeated identities included), each one the next
    /// scenario's new rows, sometimes equal to the previous one.
    static func snapshots(count: Int, seed: UInt64) -> [[TestRow]] {
        var generator = SeededGenerator(seed: seed)
        var result: [[TestRow]] = []
        for step in 0..<count {
            if step > 0 && Int.random(in: 0..<6, using: &generator) == 0 {
                result.append(result[step - 1])
            } else {
                result.append(makeScenario(.random(using: &generator), using: &generator).new)
            }
        }
        return result
    }

    /// Subscribers that ask for their next event at random moments: every event turns what
    /// the subscriber had into the newest rows (checked by the reference rules), the shared
    /// changeset goes to those one publication behind, and the payload is computed once a
    /// publication, whatever the subscribers.
    @Test(arguments: MoveMode.allCases)
    func everyEventBringsItsSubscriberToTheNewestRows(mode: MoveMode) {
        var generator = SeededGenerator(seed: 0xFEED_0001 &+ UInt64(MoveMode.allCases.firstIndex(of: mode)!))
        var payloads = 0, published = 0, shared = 0, caughtUp = 0
        for _ in 0..<40 {
            let feed = Feed(adapter: IdentifiableAdapter(), moves: mode)
            var cursors = [Feed.Cursor](repeating: Feed.Cursor(), count: 5)
            var mirrors = [[TestRow]?](repeating: nil, count: cursors.count)
            var previous: [TestRow]?
            for rows in Self.snapshots(count: 30, seed: UInt64.random(in: 0 ... .max, using: &generator)) {
                if let publication = feed.publish(rows, payload: { _ in payloads += 1; return payloads }) {
                    published += 1
                    #expect(publication.payload == payloads)
                    let problems = checkChangeset(publication.changeset, old: previous ?? [], new: rows, mode: mode)
                    #expect(problems.isEmpty, "\(problems.prefix(3))")
                } else {
                    #expect(previous.map { (try? diff($0, rows))?.hasChanges == false } == true, "nothing published only for equal rows")
                }
                previous = feed.latest?.rows
                for index in cursors.indices where Int.random(in: 0..<3, using: &generator) == 0 {
                    guard let event = feed.next(after: &cursors[index]) else {
                        #expect(mirrors[index] == nil ? feed.latest == nil : (try? diff(mirrors[index]!, rows))?.hasChanges == false)
                        continue
                    }
                    #expect(event.isInitial == (mirrors[index] == nil))
                    let problems = checkChangeset(event.changeset, old: mirrors[index] ?? [], new: event.publication.rows, mode: mode)
                    #expect(problems.isEmpty, "\(problems.prefix(3))")
                    if event.isPublicationsOwn {
                        #expect(event.changeset == event.publication.changeset)
                        shared += 1
                    } else {
                        caughtUp += 1
                    }
                    mirrors[index] = event.publication.rows
                    #expect(cursors[index].sequence == feed.latest?.sequence)
                }
            }
            // Every subscriber ends at the newest rows.
            for index in cursors.indices {
                if let event = feed.next(after: &cursors[index]) { mirrors[index] = event.publication.rows }
                #expect(mirrors[index] == feed.latest?.rows)
                #expect(feed.next(after: &cursors[index]) == nil)
            }
        }
        #expect(payloads == published)
        #expect(shared > 100 && caughtUp > 100, "shared \(shared), caught up \(caughtUp)")
    }

    /// Subscribers at the same place share one catch-up diff; it equals the one-shot diff.
    @Test func laggingSubscribersShareOneCatchUp() throws {
        let feed = LiveFeed<IdentifiableAdapter<TestRow>, Void>(adapter: IdentifiableAdapter())
        let first = (0..<50).map { TestRow(id: $0, content: 0) }
        feed.publish(first)
        var a = LiveFeed<IdentifiableAdapter<TestRow>, Void>.Cursor(), b = a
        _ = feed.next(after: &a)
        _ = feed.next(after: &b)
        var rows = first
        for step in 1...5 {
            rows[step].content += 1
            rows.append(TestRow(id: 100 + step, content: 0))
            feed.publish(rows)
        }
        let eventA = try #require(feed.next(after: &a)), eventB = try #require(feed.next(after: &b))
        #expect(!eventA.isPublicationsOwn && eventA.changeset == eventB.changeset)
        #expect(eventA.changeset == (try diff(first, rows)))
    }

    /// Subscriptions iterated by tasks at different paces: each ends at the last rows after
    /// `finish()`, every event applies, and the feed forgets a subscriber whose task ended.
    @Test func asyncSubscribersConvergeAndEnd() async {
        let feed = Feed(adapter: IdentifiableAdapter())
        let snapshots = Self.snapshots(count: 200, seed: 0xFEED_0002)
        let results = await withTaskGroup(of: (Bool, [TestRow]?).self) { group in
            for pace in 0..<4 {
                let subscription = feed.subscribe()
                group.addTask {
                    var mirror: [TestRow]?
                    var allApply = true
                    for await event in subscription {
                        allApply = allApply && checkChangeset(event.changeset, old: mirror ?? [], new: event.publication.rows, mode: .minimal).isEmpty
                        mirror = event.publication.rows
                        for _ in 0..<(pace * 3) { await Task.yield() }
                    }
                    return (allApply, mirror)
                }
            }
            group.addTask {
                for rows in snapshots {
                    feed.publish(rows) { $0.changeset.insertions.count }
                    await Task.yield()
                }
                feed.finish()
                return (true, nil)
            }
            var results: [(Bool, [TestRow]?)] = []
            for await result in group { results.append(result) }
            return results
        }
        let subscribers = results.filter { $0.1 != nil }
        #expect(subscribers.count == 4)
        for (allApply, mirror) in subscribers {
            #expect(allApply)
            #expect(mirror == feed.latest?.rows)
        }
        #expect(feed.subscriberCount == 0)
        // A finished feed ignores what is published after.
        #expect(feed.publish([TestRow(id: 1, content: 1)]) { _ in 0 } == nil)
        #expect(feed.latest?.rows == snapshots.last)
    }

    @Test func aSubscriberCancelledLeavesTheFeed() async {
        let feed = Feed(adapter: IdentifiableAdapter())
        feed.publish([TestRow(id: 1, content: 0)]) { _ in 0 }
        let task = Task {
            var count = 0
            for await _ in feed.subscribe() { count += 1 }
            return count
        }
        while feed.subscriberCount == 0 { await Task.yield() }
        task.cancel()
        #expect(await task.value == 1)
        #expect(feed.subscriberCount == 0)
    }
}
