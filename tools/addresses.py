"""The addresses learners can type to reach this machine: its IP addresses on its networks.

`./course serve --host 0.0.0.0` listens on every network this machine is on; a learner needs
one of its addresses (a machine's name often resolves on its own network only, or not at all).
On Linux every interface's IPv4 address is read with the SIOCGIFADDR request, and the IPv6
ones from /proc/net/if_inet6 (link-local ones left out: they need an interface name typed
after them); elsewhere, the address of the interface a packet to the outside would leave from
(a UDP socket connected, nothing sent). Loopback addresses (this machine only) are left out.
"""

import fcntl
import ipaddress
import socket
import struct
from pathlib import Path

SIOCGIFADDR = 0x8915


def _ipv4_of(name: str) -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            answer = fcntl.ioctl(probe.fileno(), SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
        except OSError:                      # no IPv4 address on that interface
            return None
    return socket.inet_ntoa(answer[20:24])


def _ipv6(table=Path("/proc/net/if_inet6")) -> list[str]:
    found = []
    try:
        lines = table.read_text().splitlines()
    except OSError:
        return []
    for line in lines:
        fields = line.split()
        if fields:
            found.append(str(ipaddress.IPv6Address(bytes.fromhex(fields[0]))))
    return found


def _outgoing(family: int, target: str) -> list[str]:
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as probe:
            probe.connect((target, 9))
            return [probe.getsockname()[0]]
    except OSError:
        return []


def machine_addresses(family: int = socket.AF_INET) -> list[str]:
    """This machine's addresses of one family (AF_INET or AF_INET6) that other machines can
    reach: no loopback, no link-local; sorted, without repeats."""
    found = []
    if family == socket.AF_INET:
        try:
            names = [name for _index, name in socket.if_nameindex()]
        except OSError:
            names = []
        found = [a for a in map(_ipv4_of, names) if a] or _outgoing(family, "192.0.2.1")
    else:
        found = _ipv6() or _outgoing(family, "2001:db8::1")
    usable = {a for a in found
              if not (ipaddress.ip_address(a).is_loopback or ipaddress.ip_address(a).is_link_local)}
    return sorted(usable, key=lambda a: ipaddress.ip_address(a))


def reachable_addresses(host: str) -> list[str]:
    """The addresses a server listening on ``host`` can be reached at from other machines:
    every address of this machine for 0.0.0.0 (IPv4) or :: (IPv6 and IPv4), else the host itself."""
    if host in ("0.0.0.0", ""):
        return machine_addresses(socket.AF_INET)
    if host == "::":
        return machine_addresses(socket.AF_INET6) + machine_addresses(socket.AF_INET)
    return [host]
