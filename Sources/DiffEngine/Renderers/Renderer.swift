/// Turns a diff result into what a consumer needs: a batch update for a table view, staged
/// batches for sections, JSON for a client. Renderers are plugins like adapters: the
/// built-ins implement this protocol, and any module can add its own.
public protocol ChangesetRenderer {
    /// What is rendered: a `Changeset`, a `SectionedChangeset`, …
    associatedtype Input
    /// What comes out.
    associatedtype Output

    /// Renders one diff result.
    func render(_ input: Input) -> Output
}
