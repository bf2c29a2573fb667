import AccessFuzzTarget

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEntry(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    fuzzAccess(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
