"""The group coordinator's settings: each group kind's and the committed offsets', as declared in
their own ``settings.py`` (core/settings.py says how)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .classic.settings import ClassicSettings
from .consumer.settings import ConsumerSettings
from .offsets.settings import OffsetsSettings
from .share.settings import ShareSettings
from .streams.settings import StreamsSettings


@dataclass(frozen=True)
class CoordinatorSettings:
    offsets: OffsetsSettings = field(default_factory=OffsetsSettings)
    classic: ClassicSettings = field(default_factory=ClassicSettings)
    consumer: ConsumerSettings = field(default_factory=ConsumerSettings)
    share: ShareSettings = field(default_factory=ShareSettings)
    streams: StreamsSettings = field(default_factory=StreamsSettings)

