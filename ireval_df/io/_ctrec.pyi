"""Types of the optional C tokenizer (``_ctrec.c``)."""

from typing_extensions import Buffer

class Chunk:
    """One chunk of one column, exported once through the Arrow PyCapsules."""

    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...

def parse(
    data: Buffer, kinds: str, exact: bool, threads: int, /
) -> list[list[Chunk] | tuple[str, int] | None] | None: ...
