import Foundation

/// Replays corpus files and folders (the arguments) through `target` without libFuzzer,
/// so every harness runs in ordinary CI and never rots.
public func replayCorpus(_ arguments: [String], through target: (UnsafeRawBufferPointer) -> Void) {
    var replayed = 0
    for argument in arguments {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
            FileHandle.standardError.write(Data("replay: no such file or folder: \(argument)\n".utf8))
            exit(2)
        }
        let files = isFolder.boolValue
            ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).filter { !$0.hasPrefix(".") }.sorted().map { "\(argument)/\($0)" }
            : [argument]
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("replay: cannot read \(file)\n".utf8))
                exit(2)
            }
            data.withUnsafeBytes { target($0) }
            replayed += 1
        }
    }
    print("replay: \(replayed) inputs replayed")
}
