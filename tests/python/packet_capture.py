"""Records every byte the interfaces of the network namespace it runs in carry, until it is sent SIGTERM: a
capture for tests that must show what a machine on the path sees (raw AF_PACKET sockets, as tcpdump uses;
needs root). Usage: packet_capture.py OUT_FILE; writes the frames' bytes, one after another, at the end."""

import signal
import socket
import sys

ETH_P_ALL = 0x0003


def main(out):
    capture = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    capture.settimeout(0.2)
    frames = []
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True))
    print("capturing", flush=True)
    while not stopping:
        try:
            frames.append(capture.recv(65536))
        except TimeoutError:
            continue
        except InterruptedError:
            continue
    with open(out, "wb") as f:
        for frame in frames:
            f.write(frame)


if __name__ == "__main__":
    main(sys.argv[1])
