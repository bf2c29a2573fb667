// Replays corpus files and folders through the Swift API target without libFuzzer.
import Foundation
import FuzzTargets

var replayed = 0
for argument in CommandLine.arguments.dropFirst() {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder) else {
        FileHandle.standardError.write(Data("replay: no such file or folder: \(argument)\n".utf8))
        exit(2)
    }
    let files = isFolder.boolValue
        ? try FileManager.default.contentsOfDirectory(atPath: argument).filter { !$0.hasPrefix(".") }.sorted().map { "\(argument)/\($0)" }
        : [argument]
    for file in files {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        data.withUnsafeBytes { fuzzSwiftAPI($0) }
        replayed += 1
    }
}
print("replay: \(replayed) inputs replayed")
