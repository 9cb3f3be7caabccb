"""Compares the files under /app/library and /app/inbox with where each original file must end up, by path and
by content (every file holds its original name), so a file that is lost, copied or renamed wrongly fails."""
import os
import sys

MOVED = {
    "library/2026/03/14/img-0012.jpg": "IMG_20260314_0012.JPG",
    "library/2026/03/14/img-0013.jpg": "IMG_20260314_0013.jpg",
    "library/2026/03/14/pxl-0012.jpg": "PXL_20260314_0012.jpg",
    "library/2025/12/31/vid-0001.mp4": "VID_20251231_0001.mp4",
    "library/2025/12/31/vid-0002.mov": "VID_20251231_0002.MOV",
    "library/2026/01/01/img-0002.jpeg": "IMG_20260101_0002.jpeg",
    "library/2024/02/29/pxl-0100.jpg": "PXL_20240229_0100.Jpg",
}
STAYING = [
    "IMG_20250229_0001.jpg",
    "IMG_20260230_0003.jpg",
    "IMG_2026031_0014.jpg",
    "IMG_20260314_0015 (1).jpg",
    "DSC_20260314_0017.jpg",
    "IMG_20261301_0001.jpg",
    "VID_20260704_12345.mp4",
    "notes.txt",
    "IMG_20260704_0099",
]


def files_under(top):
    found = {}
    for folder in ("inbox", "library"):
        for root, _, names in os.walk(os.path.join(top, folder)):
            for name in names:
                path = os.path.join(root, name)
                with open(path, errors="replace") as f:
                    found[os.path.relpath(path, top)] = f.read()
    return found


def main():
    want = {path: f"original name: {name}\n" for path, name in MOVED.items()}
    want.update({f"inbox/{name}": f"original name: {name}\n" for name in STAYING})
    got = files_under("/app")
    for path in sorted(set(want) | set(got)):
        if want.get(path) != got.get(path):
            print(f"{path}: want {want.get(path)!r}, got {got.get(path)!r}")
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
