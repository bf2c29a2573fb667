#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if !canImport(UIKit) && !canImport(AppKit)
extension IndexPath {
    /// An index path of a row in a section, as UIKit spells it (provided here where UIKit
    /// is not).
    public init(row: Int, section: Int) {
        self.init(indexes: [section, row])
    }

    /// The section of a two-level index path.
    public var section: Int { self[0] }

    /// The row of a two-level index path.
    public var row: Int { self[1] }
}
#endif
