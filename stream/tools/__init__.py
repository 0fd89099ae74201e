"""Tools around the live service: benchmarks, proofs, the demo game, its simulator and
the device client they drive it with. They import the service; it never imports them."""
