import CMallocCounter
import DiffEngine
import Foundation

/// Whether an engine's answer was checked and timed, failed its check, or was not run.
enum MeasurementStatus: Codable, Equatable, CustomStringConvertible {
    case ok
    case failed([String])
    case skipped(String)

    /// "ok", "FAIL: …" or "skipped: …", as the table and the JSON show it.
    var description: String {
        switch self {
        case .ok: "ok"
        case .failed(let problems): "FAIL: \(problems.prefix(3).joined(separator: "; "))"
        case .skipped(let reason): "skipped: \(reason)"
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        if text == "ok" {
            self = .ok
        } else if text.hasPrefix("skipped: ") {
            self = .skipped(String(text.dropFirst("skipped: ".count)))
        } else {
            self = .failed([text])
        }
    }

    init(problems: [String]) { self = problems.isEmpty ? .ok : .failed(problems) }
}

/// What one engine did on one scenario.
struct Measurement: Codable {
    var scenario: String
    var engine: String
    var status: MeasurementStatus
    var runs = 0
    var medianMilliseconds: Double?
    var minMilliseconds: Double?
    var maxMilliseconds: Double?
    /// Peak heap bytes above the starting point during one diff, per row of old + new.
    var peakBytesPerRow: Double?
    /// Heap allocations during one diff.
    var allocations: Int?
    var ratioToCollectionDifference: Double?
    /// A one-shot scenario's median over the `flat` engine's; a stream's over the one-shot
    /// diff's with the same adapter (`oneshot-keypath` or `oneshot-identifiable`).
    var ratioToFlat: Double?
    /// Hostile group: the crafted input's median over its random twin's.
    var ratioToRandomTwin: Double?
}

/// Keeps the optimizer from dropping a result.
@inline(never)
func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1_000 + Double(attoseconds) / 1e15
}

/// Times `body` `runs` times after `warmup` runs, calling `beforeEach` (untimed) before
/// each timed run; returns the sorted times in ms.
func time(runs: Int, warmup: Int, beforeEach: (() -> Void)? = nil, _ body: () -> Any) -> [Double] {
    for _ in 0..<warmup { blackHole(body()) }
    let clock = ContinuousClock()
    var times: [Double] = []
    times.reserveCapacity(runs)
    for _ in 0..<runs {
        beforeEach?()
        var result: Any?
        let elapsed = clock.measure { result = body() }
        blackHole(result)
        times.append(milliseconds(elapsed))
    }
    return times.sorted()
}

/// Peak extra heap bytes and allocations of one run of `body`, when the malloc counter is
/// in effect.
func heapUse(_ body: () -> Any) -> (peak: Int64, allocations: Int64)? {
    guard mc_is_active() != 0 else { return nil }
    releaseCachedDiffMemory() // measure a cold diff: its workspace counts
    let start = mc_current_bytes(), allocationsBefore = mc_allocations()
    mc_reset_peak()
    let result = body()
    let peak = mc_peak_bytes() - start
    let allocations = mc_allocations() - allocationsBefore
    blackHole(result)
    return (peak, allocations)
}

func median(_ sorted: [Double]) -> Double {
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// A buffer larger than any last-level cache this benchmark meets, to push the diff's data
/// out of the caches between cold runs.
nonisolated(unsafe) private var evictionBuffer = [UInt64](repeating: 1, count: 8 << 20) // 64 MiB

/// Reads and writes every cache line of the eviction buffer.
func evictCaches() {
    evictionBuffer.withUnsafeMutableBufferPointer { buffer in
        var sum: UInt64 = 0
        for index in stride(from: 0, to: buffer.count, by: 8) { // one 64-byte line a step
            sum &+= buffer[index]
            buffer[index] = sum
        }
        blackHole(sum)
    }
}
