//! The wire codec: prost's, except that a message that does not parse is
//! the sender's fault (InvalidArgument, so a peer sees its own mistake),
//! not the receiver's (prost's codec says Internal).

use prost::Message;
use tonic::codec::{BufferSettings, Codec, DecodeBuf};
use tonic::{Code, Status};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// [`ProstCodec`] with malformed messages refused as InvalidArgument.
#[derive(Debug, Clone, Default)]
pub struct WireCodec<T, U>(ProstCodec<T, U>);

impl<T, U> Codec for WireCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = WireDecoder<U>;

    fn encoder(&mut self) -> ProstEncoder<T> {
        self.0.encoder()
    }

    fn decoder(&mut self) -> WireDecoder<U> {
        WireDecoder(self.0.decoder())
    }
}

/// Decodes like prost; a parse error becomes InvalidArgument.
#[derive(Debug, Clone, Default)]
pub struct WireDecoder<U>(ProstDecoder<U>);

impl<U: Message + Default> tonic::codec::Decoder for WireDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(buf).map_err(|s| match s.code() {
            Code::Internal => Status::invalid_argument(format!("malformed message: {}", s.message())),
            _ => s,
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}
