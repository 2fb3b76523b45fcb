"""Installed by tests/image/test-image.sh as the user: where it lands is what the test checks."""


def main():
    print("gpuenv-test-pip from " + __file__)
